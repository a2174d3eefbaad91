"""The stopping reason in words, for every way a run stops."""

from __future__ import annotations

import pytest

from coder_eval.manifest import AdaptiveRecord, SequenceLook, SequencePath, UntilConclusiveRule
from coder_eval.run.adaptive_words import reason_text


def stopped(stop: str, decision: str | None, low: float, high: float, **rule: object) -> AdaptiveRecord:
    look = SequenceLook(task_id="t1", value=1.0, low=low, high=high)
    return AdaptiveRecord(
        rule=UntilConclusiveRule.model_validate(rule),
        baseline="baseline",
        candidate="with_skill",
        seed=1,
        order=["t1"],
        max_tasks=80,
        episodes_per_task=6,
        paths=[SequencePath(metric="passed", looks=[look], decision=decision)],  # type: ignore[arg-type]
        stop=stop,  # type: ignore[arg-type]
        decided_tasks=18,
        blocked="t7",
    )


@pytest.mark.parametrize(
    ("stop", "decision", "low", "high", "said"),
    [
        (
            "decided",
            "better",
            0.05,
            0.6,
            "with_skill better than baseline after 18 of at most 80 tasks: "
            "the interval [+0.05, +0.60] excludes 0",
        ),
        ("decided", "worse", -0.6, -0.05, "with_skill worse than baseline after 18"),
        (
            "decided",
            "no_effect",
            -0.1,
            0.15,
            "no difference as large as 0.2 between with_skill and baseline after 18 of at most 80 tasks: "
            "the interval [-0.10, +0.15] lies inside ±0.2",
        ),
        (
            "max_tasks",
            None,
            -0.3,
            0.4,
            "inconclusive after 18 of at most 80 tasks (the task cap): the interval [-0.30, +0.40] holds 0",
        ),
        ("all_tasks", None, -0.3, 0.4, "(every task ran)"),
        ("max_cost_usd", None, -0.3, 0.4, "(the dollar budget)"),
        ("blocked", None, -0.3, 0.4, "task t7 stayed invalid after 3 runs: it is never dropped"),
    ],
)
def test_each_stop_is_worded(stop: str, decision: str | None, low: float, high: float, said: str) -> None:
    assert said in reason_text(stopped(stop, decision, low, high))


def test_an_unknown_price_is_said() -> None:
    assert "task t7 has no cost_usd" in reason_text(stopped("blocked", None, -1, 1), "cost_usd")
