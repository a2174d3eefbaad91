"""recorded_calls: the expected and forbidden calls, and what a failure says it saw."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from coder_eval.criteria import GradingContext
from coder_eval.sandbox import FakeSandbox
from coder_eval.trajectory import CliCall
from tests.criteria.builders import grade, reason


def call(command: str, exit_code: int = 0, **request: object) -> CliCall:
    stdout = json.dumps({"request": request}) if request else "not json\n"
    return CliCall(name="sitectl", argv=shlex.split(command), exit_code=exit_code, stdout=stdout)


def ctx(*calls: CliCall) -> GradingContext:
    recorders = {"sitectl": ".coder_eval/calls/sitectl.jsonl"}
    return GradingContext(sandbox=FakeSandbox(), events=list(calls), task_dir=Path.cwd(), recorders=recorders)


UPDATE = {
    "args_regex": "^pages update 12\\b",
    "stdout_json": [{"expression": "request.path", "equals": "/pages/12"}],
}
SPEC = {"type": "recorded_calls", "shim": "sitectl", "expect": [UPDATE]}


def test_an_expected_call_passes_and_a_forbidden_one_fails() -> None:
    made = ctx(call("sitectl pages update 12 --title x", method="PATCH", path="/pages/12"))
    assert grade(SPEC, made).score == 1.0
    forbid = {**SPEC, "forbid": [{"args_regex": "--title"}]}
    assert reason(forbid, made) == "failed: forbid[0] '--title': called 'sitectl pages update 12 --title x'"


def test_an_unmet_expectation_names_the_sub_check_and_the_value_seen() -> None:
    wrong_path = ctx(call("sitectl pages update 12 --title x", method="PATCH", path="/pages/13"))
    assert reason(SPEC, wrong_path) == (
        "failed: expect[0] '^pages update 12\\\\b': call 'sitectl pages update 12 --title x': "
        "stdout_json request.path equals '/pages/12', found '/pages/13'"
    )
    refused = ctx(call("sitectl pages update 12", exit_code=2, method="PATCH", path="/pages/12"))
    with_exit = {**SPEC, "expect": [{**UPDATE, "exit_code": 0}]}
    assert reason(with_exit, refused).endswith(": exit_code 2, expected 0")
    assert reason(SPEC, ctx(call("sitectl pages update 12"))).endswith(
        "stdout_json: stdout is not JSON: 'not json\\n'"
    )
    assert reason(SPEC, ctx(call("sitectl pages list"))) == (
        "failed: expect[0] '^pages update 12\\\\b': no call's arguments matched"
    )


def test_ordered_expectations_say_when_the_call_came_too_early() -> None:
    calls = ctx(
        call("sitectl pages update 12", path="/pages/12"), call("sitectl pages publish 12", path="/publish")
    )
    ordered = {**SPEC, "ordered": True, "expect": [{"args_regex": "^pages publish"}, UPDATE]}
    assert reason(ordered, calls) == (
        "failed: expect[1] '^pages update 12\\\\b': only before the previous expected call (ordered)"
    )


def test_the_agents_text_in_a_failure_is_bounded_and_escaped() -> None:
    hostile = ctx(call("sitectl pages update 12", path="\x1b]52;c;aGk=\x07" + "x" * 500))
    said = grade(SPEC, hostile).details["failed"][0]
    assert "\x1b" not in said and "\\x1b]52;c;aGk=\\x07" in said and said.endswith("(+352 characters)")
