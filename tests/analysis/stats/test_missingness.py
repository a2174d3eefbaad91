"""Invalid episodes in a comparison: counted by cause per arm, and bounded so they cannot decide it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from coder_eval.analysis import compare, invalid_counts, load_runs
from coder_eval.analysis.stats.missingness import arms_text, bound_p, counts_text, extremes, invalid_causes
from tests.analysis.builders import episodes_frame, write_episode


def test_causes_are_read_as_recorded_and_named_when_they_are_not(tmp_path: Path) -> None:
    write_episode(tmp_path, "t1", "a", 0, outcome="invalid", cause="provider")
    write_episode(tmp_path, "t1", "a", 1, outcome="invalid", cause="harness")
    write_episode(tmp_path, "t2", "a", 0, outcome="invalid")  # a run made before causes were kept
    write_episode(tmp_path, "t3", "a", 0, end=False)  # no episode_end: interrupted
    write_episode(tmp_path, "t4", "a", 0, outcome="pass")
    write_episode(tmp_path, "t4", "b", 0, outcome="invalid", cause="grader")
    episodes = load_runs(tmp_path / "run1").episodes

    assert sorted(invalid_causes(episodes)) == ["grader", "harness", "interrupted", "provider", "unrecorded"]
    assert invalid_counts(episodes, "a") == {"harness": 1, "provider": 1, "interrupted": 1, "unrecorded": 1}
    assert counts_text(invalid_counts(episodes, "b")) == "1 (grader 1)"
    assert arms_text("a", {}, "b", {"grader": 1}) == "invalid episodes excluded: a 0, b 1 (grader 1)"
    assert arms_text("a", {}, "b", {}) == ""


def test_a_frame_without_causes_counts_them_unrecorded() -> None:
    frame = episodes_frame({"a": {"t1": ["invalid", "pass"]}, "b": {"t1": ["pass", "pass"]}})
    assert invalid_counts(frame, "a") == {"unrecorded": 1} and invalid_counts(frame, "b") == {}


def test_the_extremes_fill_each_arms_invalid_episodes_at_its_worst_and_best() -> None:
    frame = episodes_frame({"a": {"t1": ["invalid", "pass"]}, "b": {"t1": ["fail", "invalid"]}})
    worst, best = extremes(frame, "a", "b", "passed")
    assert list(worst["outcome"]) == ["fail", "pass", "fail", "pass"]  # a's invalid fails, b's passes
    assert list(best["outcome"]) == ["pass", "pass", "fail", "fail"]


def test_amounts_are_bounded_by_the_range_seen_on_their_task() -> None:
    frame = episodes_frame(
        {"a": {"t1": ["invalid", "pass"]}, "b": {"t1": ["pass", "pass"]}}, cost_usd=[np.nan, 2.0, 1.0, 5.0]
    )
    worst, best = extremes(frame, "a", "b", "cost_usd", "amount")
    assert worst["cost_usd"].tolist()[0] == 5.0 and best["cost_usd"].tolist()[0] == 1.0


def informative(lost: int = 4, tasks: int = 14) -> pd.DataFrame:
    """The candidate's provider failures (``lost`` tasks) fall where the baseline passes (it would have
    failed them); on the others it wins ``tasks - 7`` tasks to 0 (14 tasks: 7 to 0)."""
    base = {f"t{i}": ["pass" if i < 6 else "fail"] for i in range(tasks)}
    cand = {f"t{i}": ["invalid" if i < lost else "fail" if i == 13 else "pass"] for i in range(tasks)}
    frame = episodes_frame({"base": base, "cand": cand})
    return frame.assign(invalid_cause=np.where(frame["outcome"] == "invalid", "provider", None))


def test_a_difference_the_invalid_episodes_could_explain_is_not_called() -> None:
    c = compare(informative(), "cand", "base")
    assert c.p_value < 0.05 and c.verdict == "inconclusive"
    assert c.invalid_a == {"provider": 4} and c.invalid_b == {}
    assert c.verdict_ci_low < 0 < c.verdict_ci_high and c.p_worst >= 0.05
    assert c.missingness.startswith("not called: the invalid episodes could explain it (cand's invalid")


def test_a_difference_that_survives_the_worst_case_is_called_and_says_so() -> None:
    c = compare(informative(lost=1, tasks=17), "cand", "base")  # one invalid episode: 10 to 1 at worst
    assert c.verdict == "a_better" and c.p_worst < 0.05 and c.verdict_ci_low > 0
    assert c.missingness.startswith("survives the invalid episodes at their worst")
    assert "widened to the worst and best cases" in c.verdict_method


def test_an_amounts_invalid_episodes_are_bounded_by_what_their_task_cost() -> None:
    """12 tasks, two runs each; the candidate costs 0.8x (with noise) and measured nothing on 4 tasks:
    at worst those cost it what the dearest episode of their task cost, so it is still cheaper."""
    rng = np.random.default_rng(3)
    scale = np.repeat(rng.lognormal(0, 1, 12), 2)
    lost = np.repeat(np.arange(12) < 4, 2)
    outcomes = {
        "base": {f"t{i}": ["pass", "pass"] for i in range(12)},
        "cand": {f"t{i}": ["invalid" if i < 4 else "pass"] * 2 for i in range(12)},
    }
    cost = np.concatenate([scale, np.where(lost, np.nan, 0.8 * scale * rng.lognormal(0, 0.05, 24))])
    c = compare(episodes_frame(outcomes, cost_usd=cost), "cand", "base", "cost_usd")
    assert c.basis == "ratio" and c.n_tasks == 8 and c.invalid_a == {"unrecorded": 8}
    assert c.verdict == "a_better" and c.verdict_ci_high < 1
    assert "counted as the largest value seen on their task" in c.missingness


def test_the_bounds_p_is_the_largest_when_the_directions_agree_and_1_when_not() -> None:
    assert bound_p([0.2, 0.1, 0.3], [0.01, 0.04, 0.002]) == 0.04
    assert bound_p([0.2, -0.1, 0.3], [0.01, 0.04, 0.002]) == 1.0
    assert bound_p([0.2, float("nan"), 0.3], [0.01, 0.04, 0.002]) == 1.0


def test_holm_across_metrics_adjusts_the_p_each_verdict_rests_on() -> None:
    from coder_eval.analysis import compare_metrics

    frame = informative().assign(score=lambda f: f["passed"].astype(float))
    table = compare_metrics(frame, "cand", "base", ["passed", "score"])
    assert (table["p_adjusted"] >= table["p_worst"]).all() and set(table["verdict"]) == {"inconclusive"}


def test_without_invalid_episodes_nothing_changes() -> None:
    frame = episodes_frame(
        {"a": {f"t{i}": ["pass"] for i in range(8)}, "b": {f"t{i}": ["fail"] for i in range(8)}}
    )
    c = compare(frame, "a", "b")
    assert c.invalid_a == {} and np.isnan(c.p_worst) and c.missingness == "" and c.verdict == "a_better"


@pytest.mark.slow
def test_an_arm_invalid_when_it_would_fail_is_not_called_better_on_noise() -> None:
    """Both arms pass each task with the same probability (task difficulty logit ~ N(0, 1), 40 tasks,
    one run each); the candidate's provider fails 60 % of the episodes it would have failed. Left out,
    those make it look better; the verdict must hold its level anyway. 400 simulated suites: the
    Monte Carlo standard error of a rate of 5 % is 1.1 points, so a rate of at most 5 % (the target)
    is checked with a margin of 1.5 standard errors, and the rate without the bounds is shown far
    above it (the same suites, the p-value of the test alone)."""
    rng = np.random.default_rng(33)
    called = called_without = 0
    sims, tasks = 400, 40
    for _ in range(sims):
        p = 1 / (1 + np.exp(-rng.normal(0, 1, tasks)))
        base, cand = rng.random(tasks) < p, rng.random(tasks) < p
        lost = ~cand & (rng.random(tasks) < 0.6)
        outcome = {"base": {}, "cand": {}}
        for i in range(tasks):
            outcome["base"][f"t{i}"] = ["pass" if base[i] else "fail"]
            outcome["cand"][f"t{i}"] = ["invalid" if lost[i] else "pass" if cand[i] else "fail"]
        c = compare(episodes_frame(outcome), "cand", "base", planned=False)
        called += c.verdict == "a_better"
        called_without += c.p_value < 0.05 and c.diff > 0
    assert called / sims <= 0.05
    assert called_without / sims >= 0.15  # what the test alone calls (19 % here)
