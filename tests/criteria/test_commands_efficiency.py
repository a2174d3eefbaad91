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
