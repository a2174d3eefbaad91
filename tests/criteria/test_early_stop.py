"""Early stop as criteria arm it: ``stop_early`` blocks, the older ``stop_when``, and live decisions."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from coder_eval.criteria import GradingContext
from coder_eval.criteria.early_stop import StopEarly
from coder_eval.episode.iterations import armed_criteria, early_stop_check
from coder_eval.episode.plan import EpisodePlan
from coder_eval.episode.runner import run_episode
from coder_eval.sandbox import FakeSandbox
from coder_eval.task import TaskSpec, load_tasks
from coder_eval.trajectory import CriterionResult, ToolCall, read_trajectory
from tests.criteria.builders import Transcript, load_error
from tests.helpers import write_task

NO_FORCE = '{type: command_executed, command_pattern: "push --force", max_count: 0, min_count: 0'


def task_with(tmp_path: Path, criterion: str, stop_early: str = "true") -> TaskSpec:
    body = f"""
    task_id: armed
    initial_prompt: p
    run_limits: {{stop_early: {stop_early}}}
    success_criteria:
      - {criterion}
    """
    (task,) = load_tasks([write_task(tmp_path, body)])
    return task


@pytest.mark.parametrize(
    ("when", "rule"),
    [
        ("pass", StopEarly(on_pass="stop", on_fail="continue")),
        ("fail", StopEarly(on_pass="continue", on_fail="stop")),
        ("decided", StopEarly(on_pass="stop", on_fail="stop")),
    ],
)
def test_stop_when_is_read_as_a_stop_early_block(tmp_path: Path, when: str, rule: StopEarly) -> None:
    task = task_with(tmp_path, f"{{type: skill_triggered, skill_name: pdf, stop_when: {when}}}")
    assert task.success_criteria[0].stop_early == rule  # type: ignore[attr-defined]


def test_stop_when_auto_arms_what_the_criterion_can_decide(tmp_path: Path) -> None:
    task = task_with(tmp_path, NO_FORCE + ", stop_when: auto}")
    assert task.success_criteria[0].stop_early == StopEarly(on_pass="continue", on_fail="stop")  # type: ignore[attr-defined]


def test_stop_when_is_inert_unless_the_task_sets_run_limits_stop_early_true(tmp_path: Path) -> None:
    (task,) = load_tasks(
        [
            write_task(
                tmp_path,
                "task_id: t\ninitial_prompt: p\nsuccess_criteria:\n  - " + NO_FORCE + ", stop_when: fail}\n",
            )
        ]
    )
    assert task.success_criteria[0].stop_early is None  # type: ignore[attr-defined]
    assert armed_criteria(task) == []


@pytest.mark.parametrize(
    ("criterion", "message"),
    [
        (
            "{type: file_exists, path: x, stop_when: pass}",
            "stop_when: early stop is armed only on command_executed, command_not_executed and "
            "skill_triggered",
        ),
        (
            NO_FORCE + ", stop_when: pass}",
            "this command_executed can only be decided fail while the agent runs",
        ),
        ("{type: command_executed, min_count: 0, stop_when: decided}", "can only be decided at the end"),
        (
            "{type: skill_triggered, skill: pdf, stop_when: soon}",
            "'soon' is not one of pass, fail, decided, auto",
        ),
        (
            "{type: skill_triggered, skill: pdf, stop_when: pass, stop_early: true}",
            "give stop_when or stop_early",
        ),
    ],
)
def test_stop_when_that_cannot_work_fails_at_load(tmp_path: Path, criterion: str, message: str) -> None:
    error = load_error(tmp_path, f"- {criterion}", extra="run_limits: {stop_early: true}\n")
    assert message in error


def decided(task: TaskSpec, events: list[object], tmp_path: Path) -> bool:
    check = early_stop_check(armed_criteria(task), lambda evs: GradingContext(FakeSandbox(), evs, tmp_path))
    assert check is not None
    return asyncio.run(check(list(events)))  # type: ignore[arg-type]


def test_a_forbidden_command_is_a_settled_fail_that_stops_the_run(tmp_path: Path) -> None:
    task = task_with(tmp_path, NO_FORCE + ", stop_early: {on_pass: continue}}")
    assert not decided(task, Transcript().bash("git push origin main").events, tmp_path)
    assert decided(task, Transcript().bash("git push --force origin main").events, tmp_path)


@pytest.mark.parametrize(
    ("expected", "engaged", "settled"),
    [
        ("pdf", [], False),
        ("pdf", ["pdf"], True),
        ("pdf", ["docx"], True),
        ("", [], False),
        ("", ["pdf"], True),
    ],
)
def test_skill_triggered_is_settled_by_the_first_skill_engaged(
    tmp_path: Path, expected: str, engaged: list[str], settled: bool
) -> None:
    task = task_with(tmp_path, f"{{type: skill_triggered, expected_skill: '{expected}', stop_when: decided}}")
    events = Transcript()
    for skill in engaged:
        events.tool("Skill", {"skill": skill})
    assert decided(task, events.events, tmp_path) is settled


@pytest.mark.slow
def test_stop_when_fail_ends_the_episode_at_the_forbidden_command(tmp_path: Path) -> None:
    body = """
    task_id: no-force
    initial_prompt: Publish the branch.
    agent: {type: claude-code, model: scripted, permission_mode: bypassPermissions}
    run_limits: {stop_early: true}
    scripted:
      model: claude-sonnet-4-5
      turns:
        - blocks: [{tool_use: {name: Bash, input: {command: "echo git push --force > pushed.txt"}}}]
        - blocks: [{tool_use: {name: Bash, input: {command: "echo more > more.txt"}}}]
        - blocks: [{text: "Done."}]
    success_criteria:
      - id: no-force
        type: command_executed
        command_pattern: "push --force"
        max_count: 0
        min_count: 0
        stop_when: fail
      - {id: done, type: message_matches, pattern: Done}
    """
    (task,) = load_tasks([write_task(tmp_path, body)])

    end = asyncio.run(run_episode(EpisodePlan(task), "r", tmp_path / "e.jsonl"))

    events = read_trajectory(tmp_path / "e.jsonl").events
    commands = [e.input.get("command") for e in events if isinstance(e, ToolCall)]
    verdicts = {e.criterion_id: e.passed for e in events if isinstance(e, CriterionResult)}
    assert (end.status, end.outcome) == ("stopped_early", "fail"), end.error
    assert commands == ["echo git push --force > pushed.txt"]
    assert verdicts == {"no-force": False, "done": False}
