"""command_executed: counting the shell commands an agent ran, and the oracle end to end."""

from __future__ import annotations

import asyncio
from pathlib import Path

from coder_eval.episode.plan import EpisodePlan
from coder_eval.episode.runner import run_episode
from coder_eval.task import load_tasks
from coder_eval.trajectory import CriterionResult, read_trajectory
from tests.criteria.builders import Transcript, context, grade, load_error
from tests.helpers import write_task

RAN_TESTS = Transcript().bash("cd src && python -m pytest -q", exit_code=1).bash("pytest -q").events


def test_passes_when_a_matching_command_ran() -> None:
    verdict = grade(
        {"type": "command_executed", "pattern": r"\bpytest\b", "min_count": 2}, context(RAN_TESTS)
    )
    assert verdict.score == 1.0
    assert verdict.details["commands"] == ["#0 Bash: cd src && python -m pytest -q", "#1 Bash: pytest -q"]


def test_fails_when_no_command_matches() -> None:
    verdict = grade({"type": "command_executed", "pattern": "ruff check"}, context(RAN_TESTS))
    assert verdict.score == 0.0
    assert verdict.details["count"] == 0
    assert verdict.details["tool_calls"] == 2


def test_require_success_counts_only_clean_exits() -> None:
    spec = {"type": "command_executed", "pattern": "pytest", "min_count": 2, "require_success": True}
    verdict = grade(spec, context(RAN_TESTS))
    assert verdict.score == 0.0
    assert verdict.details["unsuccessful"] == [
        "#0 Bash: cd src && python -m pytest -q (exit 1, is_error True)"
    ]


def test_exclude_and_other_tools_do_not_count() -> None:
    events = Transcript().bash("pytest --collect-only").tool("Grep", {"command": "pytest"}).events
    spec = {"type": "command_executed", "pattern": "pytest", "exclude": "--collect-only"}
    assert grade(spec, context(events)).score == 0.0


def test_max_count_zero_forbids_a_command() -> None:
    spec = {"type": "command_executed", "pattern": "git push .*--force", "min_count": 0, "max_count": 0}
    assert grade(spec, context(RAN_TESTS)).score == 1.0
    assert grade(spec, context(Transcript().bash("git push origin --force").events)).score == 0.0


def test_invalid_regex_fails_at_load(tmp_path: Path) -> None:
    message = load_error(tmp_path, "- type: command_executed\n  pattern: 'pytest ('")
    assert f"{tmp_path / 'task.yaml'}:5: success_criteria[0].pattern: invalid regex 'pytest ('" in message


def test_unknown_field_and_bad_range_fail_at_load(tmp_path: Path) -> None:
    message = load_error(tmp_path, "- type: command_executed\n  patern: pytest")
    assert "success_criteria[0].patern: unknown field (did you mean 'pattern'?)" in message
    message = load_error(tmp_path, "- type: command_executed\n  pattern: x\n  min_count: 2\n  max_count: 1")
    assert "max_count (1) is below min_count (2)" in message


def test_oracle_steps_are_graded_end_to_end(tmp_path: Path) -> None:
    path = write_task(
        tmp_path / "tasks",
        """
        task_id: greet
        initial_prompt: write hello to hello.txt, then check it
        agent: {kind: oracle}
        reference_solution: |
          echo hello > hello.txt

          grep -q hello hello.txt
        success_criteria:
          - id: checked
            type: command_executed
            pattern: "^grep .*hello\\\\.txt"
            require_success: true
          - id: no-rm
            type: command_executed
            pattern: "\\\\brm\\\\b"
            min_count: 0
            max_count: 0
        """,
    )
    (task,) = load_tasks([path])
    trajectory_path = tmp_path / "greet.jsonl"
    end = asyncio.run(run_episode(EpisodePlan(task), "r", trajectory_path))
    results = {
        e.criterion_id: e for e in read_trajectory(trajectory_path).events if isinstance(e, CriterionResult)
    }
    assert end.outcome == "pass", end.error
    assert results["checked"].passed and results["checked"].kind == "command_executed"
    assert results["checked"].details["commands"] == ["#1 Bash: grep -q hello hello.txt"]
    assert results["no-rm"].passed


def test_original_field_names_load_to_the_same_model() -> None:
    from tests.criteria.builders import criterion

    ours = criterion({"type": "command_executed", "tool": "Bash", "pattern": "pytest", "exclude": "-k"})
    theirs = criterion(
        {
            "type": "command_executed",
            "tool_name": "Bash",
            "command_pattern": "pytest",
            "exclude_pattern": "-k",
        }
    )
    assert ours == theirs


def test_pattern_also_matches_the_shell_normalised_command() -> None:
    events = Transcript().bash("git  commit -m 'fix the bug'").events
    assert (
        grade({"type": "command_executed", "pattern": "commit -m fix the bug"}, context(events)).score == 1.0
    )
    excluded = {"type": "command_executed", "pattern": "git", "exclude_pattern": "-m fix the"}
    assert grade(excluded, context(events)).score == 0.0


def test_command_not_executed_is_a_maximum_of_zero(tmp_path: Path) -> None:
    events = Transcript().bash("rm -rf build").events
    spec = {"type": "command_not_executed", "command_pattern": r"\brm\b"}
    assert grade(spec, context(events)).score == 0.0
    assert grade(spec, context(Transcript().bash("ls").events)).score == 1.0
    assert "command_not_executed means no matching command" in load_error(
        tmp_path, "- type: command_not_executed\n  pattern: x\n  max_count: 2"
    )


def test_a_typo_of_an_original_name_is_suggested_by_that_name(tmp_path: Path) -> None:
    error = load_error(tmp_path, "- type: command_executed\n  command_patern: x")
    assert "command_patern: unknown field (did you mean 'command_pattern'?)" in error


def test_tool_name_without_a_pattern_counts_every_call_of_that_tool() -> None:
    events = Transcript().read("README.md").bash("ls").read("setup.py").events
    spec = {"type": "command_executed", "tool_name": "Read", "min_count": 2}
    verdict = grade(spec, context(events))
    assert (verdict.score, verdict.details["count"]) == (1.0, 2)
    assert verdict.details["commands"] == [
        '#0 Read: {"file_path": "README.md"}',
        '#2 Read: {"file_path": "setup.py"}',
    ]
    assert grade({**spec, "min_count": 3}, context(events)).score == 0.0


def test_a_null_tool_checks_the_calls_of_every_tool() -> None:
    events = Transcript().read("notes/pytest.md").bash("pytest -q").events
    assert (
        grade(
            {"type": "command_executed", "command_pattern": "pytest", "min_count": 2}, context(events)
        ).score
        == 0.0
    )
    spec = {"type": "command_executed", "tool_name": None, "command_pattern": "pytest", "min_count": 2}
    assert grade(spec, context(events)).details["count"] == 2
