"""Replaying recorded episodes through the sequence: only complete tasks in the recorded order
count, a gap stops the count, amounts bet on the sign, several metrics all decide."""

from __future__ import annotations

import numpy as np
import pytest

from coder_eval.manifest import AdaptiveRecord, PlannedEpisode, UntilConclusiveRule
from coder_eval.run.adaptive_replay import lost_by_harness, observation, redecide, replay, task_done
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


def end(outcome: str, cost: float | None = 1.0, cause: str | None = None) -> EpisodeEnd:
    return EpisodeEnd(outcome=outcome, status="completed", cost_usd=cost, invalid_cause=cause)  # type: ignore[arg-type]


def ends(tasks: int, c: str = "pass", b: str = "fail") -> dict[str, EpisodeEnd]:
    return {e.episode_id: end(c if e.variant_id == "c" else b) for e in plan(tasks)}


def test_tasks_count_in_the_recorded_order_and_stop_at_the_decision() -> None:
    state = replay(record(30), plan(30), ends(30))

    assert state.decided and state.record.decision == "better"
    looks = state.record.paths[0].looks
    assert [look.task_id for look in looks] == [f"t{i}" for i in reversed(range(30))][: len(looks)]
    assert state.next_index == len(looks) < 30 and all(look.value == 1.0 for look in looks)


def test_a_task_not_yet_finished_or_lost_by_the_harness_stops_the_count_there() -> None:
    done = ends(10)
    del done["t8--b"]  # the second task in the order
    done["t5--c"] = end("invalid", cause="harness")

    state = replay(record(10), plan(10), done)

    assert state.next_index == 1 and not state.decided and state.record.decision is None


def test_amounts_bet_on_the_capped_log_ratio_and_an_unknown_price_blocks() -> None:
    episodes = plan(1)
    cheap = {"t0--c": end("pass", 0.5), "t0--b": end("pass", 2.0)}
    unpriced = {"t0--c": end("pass", None), "t0--b": end("pass", 2.0)}
    rec = record(1, metrics=["cost_usd"])

    assert observation("cost_usd", episodes, cheap, rec) == 1.0  # a quarter of the cost: at the cap of 4
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


@pytest.mark.parametrize("cause", ["provider", "grader", "agent", None])
def test_an_arms_own_invalid_episode_counts_against_it_and_is_not_run_again(cause: str | None) -> None:
    """Only the harness's losses are run again; any other invalid episode (a cause recorded or not) is
    a failure of its arm on pass rates, and the task at the cap against it on amounts."""
    episodes = plan(1)
    lost = {"t0--c": end("invalid", 0.5, cause), "t0--b": end("pass", 2.0)}
    both = {"t0--c": end("invalid", 0.5, cause), "t0--b": end("invalid", 2.0, cause)}

    assert task_done(episodes, lost) is True and not lost_by_harness(lost["t0--c"])
    assert observation("passed", episodes, lost, record(1)) == -1.0
    assert observation("cost_usd", episodes, lost, record(1, metrics=["cost_usd"])) == -1.0
    assert observation("cost_usd", episodes, both, record(1, metrics=["cost_usd"])) == 0.0
    assert task_done(episodes, {**lost, "t0--b": end("invalid", cause="harness")}) is False


def test_a_worse_arm_invalid_on_every_task_is_decided_worse_not_blocked() -> None:
    done = {
        e.episode_id: end("invalid", cause="provider") if e.variant_id == "c" else end("pass")
        for e in plan(30)
    }
    state = replay(record(30), plan(30), done)

    assert state.decided and state.record.decision == "worse" and state.unmeasured is None


@pytest.mark.slow
def test_cheaper_on_most_tasks_but_dearer_in_total_is_not_called_cheaper() -> None:
    """The candidate costs 0.8x the baseline on 70 % of tasks and 2.5x on 30 % (1.30x in total, 1.13x
    as a typical per-task ratio): "cheaper" must not be said. 300 simulated runs of at most 80 tasks
    (one run per arm, task scales log-normal, each episode's cost with 5 % noise); deciding on the sign
    of the log ratio called it cheaper in 236 of them. The error allowed is alpha = 0.05 at every
    look; at 300 runs the Monte Carlo standard error of a rate of 5 % is 1.3 points."""
    rng = np.random.default_rng(2)
    rec = record(80, metrics=["cost_usd"])
    called = 0
    for _ in range(300):
        scale = rng.lognormal(0, 1, 80)
        ratio = np.where(rng.random(80) < 0.7, 0.8, 2.5)
        noise = rng.lognormal(0, 0.05, (2, 80))
        done = {}
        for i in range(80):
            done[f"t{i}--b"] = end("pass", float(scale[i] * noise[0, i]))
            done[f"t{i}--c"] = end("pass", float(scale[i] * ratio[i] * noise[1, i]))
        called += replay(rec, plan(80), done).record.decision == "better"
    assert called / 300 <= 0.05
    uniform = (
        0  # and a candidate 0.8x on every task is called cheaper (all 50 runs here, about 35 tasks each)
    )
    for _ in range(50):
        scale, noise = rng.lognormal(0, 1, 80), rng.lognormal(0, 0.05, (2, 80))
        done = {f"t{i}--b": end("pass", float(scale[i] * noise[0, i])) for i in range(80)}
        done |= {f"t{i}--c": end("pass", float(0.8 * scale[i] * noise[1, i])) for i in range(80)}
        uniform += replay(rec, plan(80), done).record.decision == "better"
    assert uniform / 50 >= 0.9
