"""agent_judge: a read-only Claude Code judge (the real CLI, scripted) inspects a copy, submits a verdict."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest
import yaml

from coder_eval.criteria import GradingContext
from coder_eval.criteria.judges import panel
from coder_eval.criteria.judges.agent import VERDICT_TOOL_NAME, AgentJudge
from coder_eval.criteria.judges.agent_session import VerdictBox
from coder_eval.criteria.judges.workspace import judge_workspace
from coder_eval.episode.plan import EpisodePlan
from coder_eval.episode.runner import run_episode
from coder_eval.errors import GraderError
from coder_eval.sandbox import FakeSandbox, Provision, TempdirSandbox, TempdirSpec
from coder_eval.sandbox.bwrap import bwrap_problem
from coder_eval.task import load_tasks
from coder_eval.trajectory import CriterionResult, EpisodeStart, read_trajectory
from tests.criteria.builders import Transcript, criterion, evaluate, load_error
from tests.helpers import write_task

HAS_BWRAP = asyncio.run(bwrap_problem()) is None


@pytest.fixture(autouse=True)
def no_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(panel, "RETRY_BACKOFF_S", 0.0)


def verdict(score: float, passed: bool, why: str = "because") -> list[dict[str, Any]]:
    """The blocks of a scripted judge turn that submits a verdict."""
    answer = {"score": score, "passed": passed, "rationale": why}
    return [{"tool_use": {"name": VERDICT_TOOL_NAME, "input": answer}}]


def run(name: str, tool_input: dict[str, Any]) -> dict[str, Any]:
    return {"blocks": [{"tool_use": {"name": name, "input": tool_input}}]}


def judging_on(text: str, *, regex: bool = False) -> dict[str, Any]:
    """A turn that passes when the last tool result holds ``text`` (or matches it), else fails."""
    key = "last_tool_result_matches" if regex else "last_tool_result_contains"
    return {
        "when": {key: text},
        "blocks": verdict(1.0, True, "found"),
        "otherwise": verdict(0.0, False, "not"),
    }


def judge(turns: list[dict[str, Any]], **fields: Any) -> dict[str, Any]:
    """An agent_judge criterion with a scripted judge."""
    base = {"type": "agent_judge", "rubric": "Does ANSWER.md give port 8080?", "model": "scripted"}
    return {**base, "scripted": {"turns": turns}, **fields}


def workspace(tmp_path: Path, answer: str) -> GradingContext:
    root = tmp_path / "sandbox"
    root.mkdir()
    (root / "ANSWER.md").write_text(answer, encoding="utf-8")
    return GradingContext(FakeSandbox.from_folder(root), [], tmp_path, seed=7)


READ_ANSWER = [run("Read", {"file_path": "ANSWER.md"}), judging_on("8080")]


@pytest.mark.slow
@pytest.mark.parametrize(("answer", "passed"), [("Use port 8080.\n", True), ("Use port 9090.\n", False)])
def test_the_verdict_follows_what_the_judge_read(tmp_path: Path, answer: str, passed: bool) -> None:
    result = evaluate(criterion(judge(READ_ANSWER)), workspace(tmp_path, answer))
    assert (result.passed, result.score) == (passed, float(passed))
    vote = result.details["votes"][0]
    assert vote["tool_calls"][0].startswith("#0 Read:") and "ANSWER.md" in vote["tool_calls"][0]
    assert vote["attempts"] == 1 and vote["errors"] == []


@pytest.mark.slow
def test_votes_record_the_judge_runs_tokens_and_cost(tmp_path: Path) -> None:
    second = {"when": {"request_contains": "(vote 2 of 2)"}, "blocks": verdict(0.0, False, "second")}
    spec = criterion(judge([second, {"blocks": verdict(1.0, True, "first")}], votes=2, min_pass_votes=1))
    result = evaluate(spec, workspace(tmp_path, "8080"))
    votes = result.details["votes"]
    assert [(v["vote"], v["passed"], v["rationale"]) for v in votes] == [
        (1, True, "first"),
        (2, False, "second"),
    ]
    assert all(v["input_tokens"] > 1000 and v["output_tokens"] > 0 and v["cost_usd"] > 0 for v in votes)
    assert result.details["judge_cost_usd"] == pytest.approx(sum(v["cost_usd"] for v in votes))
    assert result.details["judge_input_tokens"] == sum(v["input_tokens"] for v in votes)
    assert result.details["judge_model"] == "claude-sonnet-4-6"
    assert (result.passed, result.score) == (True, 0.5)


@pytest.mark.slow
def test_an_invalid_verdict_is_refused_and_the_judge_may_submit_again(tmp_path: Path) -> None:
    bad = {"blocks": [{"tool_use": {"name": VERDICT_TOOL_NAME, "input": {"score": 5, "passed": True}}}]}
    spec = criterion(judge([bad, judging_on("rationale' is a required property")]))
    result = evaluate(spec, workspace(tmp_path, "8080"))
    assert result.passed is True
    assert result.details["votes"][0]["attempts"] == 1


@pytest.mark.slow
def test_the_judge_gets_no_host_anthropic_variables(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in {
        "ANTHROPIC_API_KEY": "sk-host-secret",
        "ANTHROPIC_BASE_URL": "http://host-proxy.invalid",
        "ANTHROPIC_AUTH_TOKEN": "host-token",
        "ANTHROPIC_MODEL": "host-model",
    }.items():
        monkeypatch.setenv(name, value)
    clean = r"(?s)\A(?!.*host-)(?=.*ANTHROPIC_API_KEY=scripted-dummy-key).*ENV-END"
    turns = [
        run("Bash", {"command": "env | grep ANTHROPIC_ | sort; echo ENV-END"}),
        judging_on(clean, regex=True),
    ]
    result = evaluate(criterion(judge(turns)), workspace(tmp_path, "8080"))
    assert result.passed is True, result.details["votes"][0]["rationale"]


ISOLATION_TASK = """
task_id: judged-copy
initial_prompt: write ANSWER.md
reference_solution: echo 'port 8080' > ANSWER.md
agent: {kind: oracle}
success_criteria:
  - id: judge
    type: agent_judge
    rubric: Is the answer right?
    model: scripted
  - id: still-there
    type: file_contains
    path: ANSWER.md
    includes: ["8080"]
  - id: nothing-new
    type: run_command
    command: test ! -e NEW.txt
"""


def run_task(folder: Path, judge_fields: dict[str, Any]) -> tuple[str, str, list[CriterionResult]]:
    body = yaml.safe_load(ISOLATION_TASK)
    body["success_criteria"][0].update(judge_fields)
    task = load_tasks([write_task(folder, yaml.safe_dump(body, sort_keys=False))])[0]
    path = folder / "episode.jsonl"
    end = asyncio.run(run_episode(EpisodePlan(task), "run", path))
    events = read_trajectory(path).events
    assert isinstance(events[0], EpisodeStart)
    return end.outcome, end.status, [e for e in events if isinstance(e, CriterionResult)]


WRITE = "rm ANSWER.md && echo x > NEW.txt && echo WROTE-IN-COPY || echo WRITE-REFUSED"


@pytest.mark.slow
@pytest.mark.parametrize(
    ("isolation", "seen"),
    [
        ("copy", "WROTE-IN-COPY"),
        pytest.param("bwrap", "WRITE-REFUSED", marks=pytest.mark.skipif(not HAS_BWRAP, reason="no bwrap")),
        pytest.param("docker", "WRITE-REFUSED", marks=pytest.mark.docker),  # made by the driver table
    ],
)
def test_what_the_judge_does_in_its_copy_never_reaches_the_sandbox(
    tmp_path: Path, isolation: str, seen: str
) -> None:
    turns = [run("Bash", {"command": WRITE}), judging_on(seen)]
    outcome, _, criteria = run_task(tmp_path, {"isolation": isolation, "scripted": {"turns": turns}})
    judged, still_there, nothing_new = criteria
    assert judged.passed is True, judged.details["votes"][0]["rationale"]  # the Bash output was `seen`
    assert judged.details["isolation"] == isolation
    assert still_there.passed is True and nothing_new.passed is True
    assert outcome == "pass"


@pytest.mark.slow
def test_a_judge_that_never_submits_is_retried_then_the_episode_is_invalid(tmp_path: Path) -> None:
    silent = {"max_retries": 1, "scripted": {"turns": [{"blocks": [{"text": "Looks fine to me."}]}]}}
    outcome, status, criteria = run_task(tmp_path, silent)
    assert (outcome, status) == ("invalid", "grader_error")
    error = criteria[0].error or ""
    assert "GraderError: agent_judge vote 1: 2 attempts failed" in error
    assert "ended without calling submit_verdict" in error
    assert criteria[1].passed is True and criteria[2].passed is True


def test_a_verdict_box_keeps_the_first_valid_verdict() -> None:
    box = VerdictBox()
    refused = box.submit({"score": 2, "passed": True, "rationale": "x"})
    accepted = box.submit({"score": 0.5, "passed": False, "rationale": "half"})
    again = box.submit({"score": 1, "passed": True, "rationale": "changed my mind"})
    assert (refused["is_error"], accepted["is_error"], again["is_error"]) == (True, False, True)
    assert box.reading is not None and (box.reading.score, box.reading.passed) == (0.5, False)
    assert "Invalid verdict, not recorded" in refused["content"][0]["text"]


def test_the_workspace_is_a_copy_without_pipes_removed_afterwards(tmp_path: Path) -> None:
    async def copy() -> tuple[Path, list[str]]:
        source = await TempdirSandbox.create(TempdirSpec(), Provision(), base_dir=tmp_path)
        try:
            await source.exec(
                "mkdir src && echo 'print(1)' > src/app.py && ln -s src/app.py link && mkfifo pipe"
            )
            async with judge_workspace(source, "copy", "http://127.0.0.1:9") as ws:
                root = Path(ws.sandbox.workdir)
                assert ws.isolation == "copy" and root != Path(source.workdir)
                assert (root / "link").is_symlink() and ws.sandbox.env["HOME"] != os.environ.get("HOME")
                return root, sorted(p.name for p in root.rglob("*"))
        finally:
            await source.close()

    root, names = asyncio.run(copy())
    assert names == ["app.py", "link", "src"]
    assert not root.exists()


def test_isolation_bwrap_where_bubblewrap_cannot_run_is_a_grader_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def missing() -> str:
        return "bwrap is not installed"

    monkeypatch.setattr("coder_eval.criteria.judges.workspace.bwrap_problem", missing)

    async def enter() -> None:
        async with judge_workspace(FakeSandbox(), "bwrap", "http://127.0.0.1:9"):
            pass

    with pytest.raises(GraderError, match="isolation 'bwrap' is unavailable: bwrap is not installed"):
        asyncio.run(enter())


def test_a_real_model_without_a_key_is_a_grader_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    spec = criterion({"type": "agent_judge", "rubric": "ok?"})
    with pytest.raises(GraderError, match="needs ANTHROPIC_API_KEY"):
        evaluate(spec, workspace(tmp_path, "x"))


def test_defaults_and_the_prompt(tmp_path: Path) -> None:
    spec = criterion({"type": "agent_judge", "rubric": "Is it right?"})
    assert isinstance(spec, AgentJudge)
    assert (spec.votes, spec.pass_votes_needed, spec.max_turns, spec.isolation) == (1, 1, 50, "auto")
    start = EpisodeStart(
        run_id="r",
        episode_id="e",
        task_id="t",
        variant_id="v",
        repeat=0,
        seed=0,
        task={"initial_prompt": "Do X."},
    )
    prompt = asyncio.run(spec.prompt(GradingContext(FakeSandbox.from_folder(tmp_path), [start], tmp_path), 1))
    assert "<rubric>\nIs it right?\n</rubric>" in prompt and "<task_prompt>\nDo X.\n</task_prompt>" in prompt
    assert prompt.endswith("(vote 1 of 1)")


def test_bad_fields_fail_when_the_task_loads(tmp_path: Path) -> None:
    assert "temperature" in load_error(tmp_path, "- type: agent_judge\n  rubric: r\n  temperature: 0.5")
    assert "min_pass_votes (2) exceeds votes (1)" in load_error(
        tmp_path, "- type: agent_judge\n  rubric: r\n  min_pass_votes: 2"
    )
    assert "'scripted' exactly when" in load_error(
        tmp_path, "- type: agent_judge\n  rubric: r\n  model: scripted"
    )
    assert "isolation" in load_error(tmp_path, "- type: agent_judge\n  rubric: r\n  isolation: podman")


@pytest.mark.slow
def test_a_judge_run_over_its_timeout_is_killed_and_fails_the_vote(tmp_path: Path) -> None:
    spec = criterion(judge([{"error": {"kind": "hang"}}], timeout=1, max_retries=0))
    with pytest.raises(GraderError, match="1 attempts failed; last: the judge timed out after 1 s"):
        evaluate(spec, workspace(tmp_path, "8080"))


def test_original_fields_load_and_shape_the_judge(tmp_path: Path) -> None:
    spec = criterion(
        {
            "type": "agent_judge",
            "prompt": "Does it work?",
            "agent": {"type": "claude-code", "model": "claude-haiku-4-5"},
            "allowed_tools": ["Read", "Bash"],
            "turn_timeout": 30,
            "files": ["notes.md"],
            "include_tool_calls": True,
        }
    )
    assert isinstance(spec, AgentJudge)
    assert (spec.rubric, spec.model, spec.allowed_tools, spec.turn_timeout) == (
        "Does it work?",
        "claude-haiku-4-5",
        ["Read", "Bash"],
        30,
    )
    (tmp_path / "notes.md").write_text("all done")
    ctx = GradingContext(FakeSandbox.from_folder(tmp_path), Transcript().bash("make").events, tmp_path)
    prompt = asyncio.run(spec.prompt(ctx, 1))
    assert '<untrusted_data source="file:notes.md">\nall done' in prompt
    assert "#0 Bash: make" in prompt and "final_message" not in prompt


@pytest.mark.slow
def test_a_judge_without_tools_judges_only_the_files_it_is_given(tmp_path: Path) -> None:
    offered = {"when": {"tool_offered": "Read"}, "blocks": verdict(0.0, False, "had tools")}
    given = {"when": {"request_contains": "Use port 8080"}, "blocks": verdict(1.0, True, "file says 8080")}
    spec = criterion(
        judge([offered, given, {"blocks": verdict(0.0, False, "no evidence")}])
        | {"allowed_tools": [], "files": ["ANSWER.md"]}
    )
    result = evaluate(spec, workspace(tmp_path, "Use port 8080.\n"))
    vote = result.details["votes"][0]
    assert (result.passed, vote["rationale"]) == (True, "file says 8080")
    assert (
        vote["tool_calls"][0]
        == f'#0 {VERDICT_TOOL_NAME}: {{"score": 1, "passed": true, "rationale": "file says 8080"}}'
    )
    assert all(VERDICT_TOOL_NAME in call for call in vote["tool_calls"])  # it had nothing else to call
    assert result.details["files"] == ["ANSWER.md"]


def test_original_fields_that_cannot_apply_are_refused_by_name(tmp_path: Path) -> None:
    assert "allowed_tools takes some of Read, Grep, Glob, Bash (or none: []), not Write" in load_error(
        tmp_path, "- type: agent_judge\n  prompt: p\n  allowed_tools: [Read, Write]"
    )
    assert "agent.type: Input should be 'claude-code'" in load_error(
        tmp_path, "- type: agent_judge\n  prompt: p\n  agent: {type: codex}"
    )
    assert "agent.permission_mode: Extra inputs" in load_error(
        tmp_path, "- type: agent_judge\n  prompt: p\n  agent: {type: claude-code, permission_mode: plan}"
    )
    assert "disagree" in load_error(
        tmp_path, "- type: agent_judge\n  prompt: p\n  model: a\n  agent: {model: b}"
    )


def test_the_isolations_are_the_sandbox_drivers() -> None:
    from coder_eval.criteria.judges.workspace import DRIVER_OF
    from coder_eval.sandbox import DRIVERS

    assert set(DRIVER_OF.values()) == {name for name, (_, driver) in DRIVERS.items() if driver is not None}
    assert DRIVER_OF["copy"] == "tempdir" and DRIVER_OF["bwrap"] == "bwrap"
