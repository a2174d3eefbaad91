"""Episode score and outcome from criterion results."""

from __future__ import annotations

import pytest

from coder_eval.agents import AgentResult
from coder_eval.episode.grading import episode_outcome, episode_score
from coder_eval.trajectory import CriterionResult


def verdict(
    score: float, weight: float = 1.0, gating: bool = True, error: str | None = None
) -> CriterionResult:
    return CriterionResult(
        criterion_id=f"c{score}",
        kind="k",
        score=score,
        passed=score >= 1.0,
        gating=gating,
        weight=weight,
        error=error,
    )


def test_score_is_the_weighted_mean() -> None:
    assert episode_score([verdict(1.0, 3.0), verdict(0.0, 1.0)]) == pytest.approx(0.75)


def test_informational_criteria_alone_average_plainly() -> None:
    assert episode_score([verdict(1.0, 0.0), verdict(0.5, 0.0)]) == pytest.approx(0.75)
    assert episode_score([]) == 0.0


def test_outcome_is_three_valued() -> None:
    ok = AgentResult()
    assert episode_outcome(ok, [verdict(1.0), verdict(0.0, 0.0, gating=False)])[0] == "pass"
    assert episode_outcome(ok, [verdict(1.0), verdict(0.0)])[0] == "fail"
    assert episode_outcome(ok, [verdict(0.0, error="boom")])[:2] == ("invalid", "grader_error")
    assert episode_outcome(ok, [verdict(0.0, gating=False, error="boom")])[0] == "pass"
    crashed = AgentResult(invalid=True, error="CLI crashed")
    assert episode_outcome(crashed, []) == ("invalid", "agent_error", "CLI crashed")
    assert episode_outcome(AgentResult(status="timeout"), [verdict(1.0)])[:2] == ("fail", "timeout")
