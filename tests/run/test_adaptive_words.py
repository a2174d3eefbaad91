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
        ("blocked", None, -0.3, 0.4, "the harness lost task t7's episodes 3 times; a task is never dropped"),
    ],
)
def test_each_stop_is_worded(stop: str, decision: str | None, low: float, high: float, said: str) -> None:
    assert said in reason_text(stopped(stop, decision, low, high))


def test_an_unknown_price_is_said() -> None:
    assert "task t7 has no cost_usd" in reason_text(stopped("blocked", None, -1, 1), "cost_usd")


def look(low: float, high: float) -> list[SequenceLook]:
    return [SequenceLook(task_id="t1", value=0.0, low=low, high=high)]


def test_each_metric_gets_its_own_decision_and_reason() -> None:
    record = stopped("max_tasks", None, 0.38, 1.0, metrics=["passed", "num_turns"]).model_copy(
        update={
            "paths": [
                SequencePath(metric="passed", looks=look(0.38, 1.0), decision="better"),
                SequencePath(metric="num_turns", looks=look(-0.4, 0.3)),
            ]
        }
    )
    said = reason_text(record)

    assert said.startswith("not every metric decided after 18 of at most 80 tasks (the task cap): ")
    assert "with_skill better than baseline: the interval [+0.38, +1.00] excludes 0" in said
    assert "the interval on num_turns [×0.66, ×1.74] (typical ratio, capped at ×4) holds ×1" in said
    assert "[+0.38, +1.00] holds 0" not in said


def test_amounts_read_as_cheaper_or_dearer_on_their_typical_ratio() -> None:
    cheaper = stopped("decided", "better", 0.1, 0.5, metrics=["cost_usd"])
    cheaper = cheaper.model_copy(
        update={"paths": [SequencePath(metric="cost_usd", looks=look(0.1, 0.5), decision="better")]}
    )
    said = reason_text(cheaper)

    assert said.startswith("with_skill cheaper than baseline on cost_usd after 18 of at most 80 tasks")
    assert "the interval [×0.50, ×0.87] (typical ratio, capped at ×4) excludes ×1" in said
    quiet = cheaper.model_copy(
        update={"paths": [SequencePath(metric="cost_usd", looks=look(-0.1, 0.1), decision="no_effect")]}
    )
    assert "no difference as large as ×1.32 either way" in reason_text(quiet)


def test_plan_words_each_decision_metric_as_the_stop_does() -> None:
    from coder_eval.run.adaptive_words import rule_text

    rule = UntilConclusiveRule(metrics=["passed", "cost_usd"])
    assert rule_text("passed", rule).endswith("excludes 0; no effect inside ±0.2")
    assert (
        "typical ratio (geometric mean of the per-task ratios, each capped at ×4) excludes ×1"
        in rule_text("cost_usd", rule)
    )
    assert rule_text("cost_usd", rule).endswith("no effect inside ×0.76 to ×1.32")
