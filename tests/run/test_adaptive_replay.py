"""Replaying recorded episodes through the sequence: only complete tasks in the recorded order
count, a gap stops the count, amounts bet on the sign, several metrics all decide."""

from __future__ import annotations

from coder_eval.manifest import AdaptiveRecord, PlannedEpisode, UntilConclusiveRule
from coder_eval.run.adaptive_replay import observation, redecide, replay
from coder_eval.trajectory import EpisodeEnd


def plan(tasks: int) -> list[PlannedEpisode]:
    return [
        PlannedEpisode(episode_id=f"t{i}--{arm}", task_id=f"t{i}", variant_id=arm, repeat=0)
        for i in range(tasks)
        for arm in ("b", "c")
    ]


def record(tasks: int, **rule: object) -> AdaptiveRecord:
    return AdaptiveRecord(
        rule=UntilConclusiveRule.model_validate(rule),
        baseline="b",
        candidate="c",
        seed=0,
        order=[f"t{i}" for i in reversed(range(tasks))],
        max_tasks=tasks,
        episodes_per_task=2,
    )


def end(outcome: str, cost: float | None = 1.0) -> EpisodeEnd:
    return EpisodeEnd(outcome=outcome, status="completed", cost_usd=cost)  # type: ignore[arg-type]


def ends(tasks: int, c: str = "pass", b: str = "fail") -> dict[str, EpisodeEnd]:
    return {e.episode_id: end(c if e.variant_id == "c" else b) for e in plan(tasks)}


def test_tasks_count_in_the_recorded_order_and_stop_at_the_decision() -> None:
    state = replay(record(30), plan(30), ends(30))

    assert state.decided and state.record.decision == "better"
    looks = state.record.paths[0].looks
    assert [look.task_id for look in looks] == [f"t{i}" for i in reversed(range(30))][: len(looks)]
    assert state.next_index == len(looks) < 30 and all(look.value == 1.0 for look in looks)


def test_a_task_not_yet_finished_or_invalid_stops_the_count_there() -> None:
    done = ends(10)
    del done["t8--b"]  # the second task in the order
    done["t5--c"] = end("invalid")

    state = replay(record(10), plan(10), done)

    assert state.next_index == 1 and not state.decided and state.record.decision is None


def test_amounts_bet_on_the_sign_and_an_unknown_price_blocks() -> None:
    episodes = plan(1)
    cheap = {"t0--c": end("pass", 0.5), "t0--b": end("pass", 2.0)}
    unpriced = {"t0--c": end("pass", None), "t0--b": end("pass", 2.0)}
    rec = record(1, metrics=["cost_usd"])

    assert observation("cost_usd", episodes, cheap, rec) == 1.0
    assert observation("passed", episodes, cheap, rec) == 0.0
    assert replay(rec, episodes, unpriced).unmeasured == "cost_usd"


def test_several_metrics_stop_only_when_every_one_has_decided() -> None:
    rec = record(60, metrics=["passed", "cost_usd"])
    both = replay(rec, plan(60), ends(60))
    alone = replay(record(60), plan(60), ends(60))

    assert both.decided and both.next_index >= alone.next_index
    assert [p.decision for p in both.record.paths] == ["better", "no_effect"]  # equal costs: no effect


def test_redecide_with_other_verdicts_words_it_as_regraded() -> None:
    rec = replay(record(30), plan(30), ends(30)).record.model_copy(update={"stop": "decided"})

    again = redecide(rec, plan(30), ends(30, c="fail"))

    assert again.decision != "better" and again.reason.startswith("regraded: ")
    assert again.order == rec.order


def test_a_regrade_that_undoes_the_decision_says_why_it_stopped_truly() -> None:
    whole = replay(record(60), plan(60), ends(60))
    ran = set(whole.record.order[: whole.next_index])  # the run stopped there: no later task ran
    recorded = {k: v for k, v in ends(60).items() if k.split("--")[0] in ran}
    rec = whole.record.model_copy(update={"stop": "decided"})

    again = redecide(rec, plan(60), {k: end("fail") for k in recorded})

    n = whole.next_index
    assert (again.stop, again.decision, again.decided_tasks) == ("regraded", "inconclusive", n)
    assert "task cap" not in again.reason and "every task ran" not in again.reason
    assert again.reason.startswith(f"regraded: inconclusive after {n} of at most 60 tasks (the run had ")
    assert f"stopped at its decision after {n} tasks; the regraded verdicts do not decide" in again.reason
