"""commands_efficiency: expected / max(actual, expected) tool calls."""

from __future__ import annotations

from pathlib import Path

from tests.criteria.builders import Transcript, context, grade, load_error, passes

EVENTS = Transcript().read("a.py").bash("pytest").bash("pytest -x").bash("pytest -q").events


def test_at_or_under_the_expected_count_scores_one() -> None:
    spec = {"type": "commands_efficiency", "expected": 4}
    verdict = grade(spec, context(EVENTS))
    assert verdict.score == 1.0
    assert verdict.details["calls_by_tool"] == {"Bash": 3, "Read": 1}


def test_extra_calls_lower_the_score_and_fail_the_default_threshold() -> None:
    spec = {"type": "commands_efficiency", "expected": 1, "tool": "Bash"}
    assert grade(spec, context(EVENTS)).score == 1 / 3
    assert not passes(spec, context(EVENTS))
    assert passes({**spec, "expected": 2, "pass_threshold": 0.5}, context(EVENTS))


def test_bad_input_fails_at_load(tmp_path: Path) -> None:
    assert "success_criteria[0].expected" in load_error(
        tmp_path, "- type: commands_efficiency\n  expected: 0"
    )
    assert "success_criteria[0].expect: unknown field (did you mean 'expected'?)" in load_error(
        tmp_path, "- type: commands_efficiency\n  expect: 3"
    )


def test_the_original_default_allows_one_extra_call_in_ten() -> None:
    ten = Transcript()
    for i in range(10):
        ten.bash(f"step {i}")
    assert passes({"type": "commands_efficiency", "expected_commands": 9}, context(ten.events))
    assert not passes({"type": "commands_efficiency", "expected_commands": 8}, context(ten.events))
    assert not passes(
        {"type": "commands_efficiency", "expected": 9, "pass_threshold": 1}, context(ten.events)
    )


def test_the_task_level_expected_commands_is_the_default(tmp_path: Path) -> None:
    from coder_eval.task import load_tasks
    from tests.helpers import write_task

    body = """
    task_id: t
    initial_prompt: p
    expected_commands: 5
    success_criteria:
      - {type: commands_efficiency}
      - {type: commands_efficiency, expected_commands: 2}
    """
    (task,) = load_tasks([write_task(tmp_path, body)])
    assert [c.expected for c in task.success_criteria] == [5, 2]  # type: ignore[attr-defined]
    assert task.expected_commands == 5


def test_no_budget_anywhere_is_an_error(tmp_path: Path) -> None:
    assert "commands_efficiency needs 'expected'" in load_error(tmp_path, "- type: commands_efficiency")
