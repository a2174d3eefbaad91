"""cli_called: the harness's records of a recorded CLI, matched by verb, positionals and flags."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from coder_eval.cli_match import parse_args
from coder_eval.criteria import GradingContext
from coder_eval.errors import GraderError
from coder_eval.sandbox import FakeSandbox
from coder_eval.trajectory import CliCall
from tests.criteria.builders import grade, load_error, reason

RECORDERS = {
    "deployctl": "cli_mocks/calls.jsonl",
    "gh": "cli_mocks/calls.jsonl",
    "sitectl": ".coder_eval/calls/sitectl.jsonl",
}


def ctx(*commands: str) -> GradingContext:
    calls = [CliCall(name=shlex.split(c)[0], argv=shlex.split(c), exit_code=0) for c in commands]
    fake = FakeSandbox(
        {"cli_mocks/calls.jsonl": '{"argv": ["deployctl", "deploy", "web", "--env", "staging"]}\n'}
    )
    return GradingContext(sandbox=fake, events=calls, task_dir=Path.cwd(), recorders=RECORDERS)


def count(spec: dict[str, object], context: GradingContext) -> int:
    verdict = grade({"type": "cli_called", **spec}, context)
    return int(verdict.details["count"])


def test_verb_positionals_and_flag_values() -> None:
    context = ctx(
        "deployctl deploy web --env staging --version=1.4.2",
        "deployctl -v deploy web --env production",
        "deployctl status web",
    )
    spec = {"tool": "deployctl", "verb": "deploy", "positional": ["web"]}
    assert count(spec, context) == 2
    assert count({**spec, "flags": {"env": {"equals": "staging"}}}, context) == 1
    assert count({**spec, "flags": {"version": {"matches_regex": r"^1\.4"}}}, context) == 1
    assert count({**spec, "flags": {"env": {"any_of": ["staging", "production"]}}}, context) == 2
    assert count({**spec, "flags": {"env": {"contains": "prod"}}}, context) == 1
    assert count({"verb_any_of": ["deploy", "status web"]}, context) == 3


def test_present_absent_and_aliases() -> None:
    context = ctx("gh pr create --draft -t title", "gh pr create --title other")
    assert (
        count({"tool": "gh", "verb": ["pr", "create"], "flags": {"draft": {"present": True}}}, context) == 1
    )
    assert count({"tool": "gh", "verb": "pr create", "flags": {"draft": {"absent": True}}}, context) == 1
    aliased = {"title": {"equals": "title", "aliases": ["-t"]}}
    assert count({"tool": "gh", "verb": "pr create", "flags": aliased}, context) == 1


def test_value_flags_and_ignore_flags_shape_the_positionals() -> None:
    context = ctx("deployctl --profile ci deploy web")
    assert count({"tool": "deployctl", "verb": "deploy"}, context) == 0  # 'ci' reads as a positional
    assert count({"tool": "deployctl", "verb": "deploy", "value_flags": ["profile"]}, context) == 1
    ignored = {"tool": "deployctl", "verb": "deploy", "value_flags": ["profile"], "ignore_flags": ["profile"]}
    assert count({**ignored, "flags": {"profile": {"present": True}}}, context) == 0


def test_counts_and_the_default_log() -> None:
    context = ctx("deployctl deploy web", "gh repo view", "sitectl pages list")
    assert count({}, context) == 2  # every recorded CLI logging to cli_mocks/calls.jsonl
    assert count({"log": ".coder_eval/calls/sitectl.jsonl"}, context) == 1
    never = grade({"type": "cli_called", "verb": "delete", "min_count": 0, "max_count": 0}, context)
    assert never.score == 1.0
    too_many = grade({"type": "cli_called", "tool": "deployctl", "max_count": 0, "min_count": 0}, context)
    assert too_many.score == 0.0


def test_the_log_file_in_the_workspace_is_never_read() -> None:
    assert count({"tool": "deployctl", "verb": "deploy"}, ctx()) == 0  # the file lists a call; no record does


def test_an_unknown_recorded_cli_is_a_grader_error() -> None:
    with pytest.raises(GraderError, match="no recorded CLI named 'kubectl'"):
        grade({"type": "cli_called", "tool": "kubectl"}, ctx())


def test_parse_args() -> None:
    parsed = parse_args(["a", "--x=1", "-y", "b", "--", "--z"], {"y"}, set())
    assert parsed.positional == ["a", "--z"] and parsed.flags == {"x": ["1"], "y": ["b"]}


def test_bad_fields_fail_at_load(tmp_path: Path) -> None:
    assert "give 'verb' or 'verb_any_of'" in load_error(
        tmp_path, "- type: cli_called\n  verb: a\n  verb_any_of: [b]"
    )
    assert "one check per flag" in load_error(
        tmp_path, "- type: cli_called\n  flags: {env: {equals: a, absent: true}}"
    )
    assert "max_count (0) is below min_count (1)" in load_error(
        tmp_path, "- type: cli_called\n  max_count: 0"
    )


def test_the_task_must_record_the_cli(tmp_path: Path) -> None:
    error = load_error(tmp_path, "- type: cli_called\n  tool: kubectl")
    assert "cli_called reads the recorded CLI kubectl" in error


def test_too_few_calls_name_the_nearest_call_and_the_part_that_differed() -> None:
    context = ctx("deployctl status web", "deployctl deploy web --env prod", "deployctl deploy api")
    spec = {"type": "cli_called", "tool": "deployctl", "verb": "deploy", "positional": ["web"]}
    staging = {**spec, "flags": {"env": {"equals": "staging"}}}
    assert reason(staging, context) == (
        "failed: 0 matching calls, at least 1 expected; nearest call 'deployctl deploy web --env prod': "
        "flag env equals 'staging': got 'prod'"
    )
    assert reason({**spec, "positional": ["db"]}, context).endswith(
        "nearest call 'deployctl deploy web --env prod': positional 'db': got 'web'"
    )
    at_most = reason({**spec, "min_count": 0, "max_count": 0}, context)
    assert at_most == (
        "failed: 1 matching calls, at most 0 expected in the matching calls: "
        "'deployctl deploy web --env prod'"
    )
    assert (
        reason({**spec, "verb": "rollback"}, ctx())
        == "failed: 0 matching calls, at least 1 expected in the recorded calls: no call"
    )
