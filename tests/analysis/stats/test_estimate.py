import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from coder_eval.analysis import wilson_interval
from coder_eval.analysis.stats.estimate import effective_count, task_estimate
from coder_eval.errors import AnalysisError


def rates(outcomes: list[list[int]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(task means, runs, variance between runs) from per-task 0/1 outcomes."""
    means = np.array([np.mean(o) for o in outcomes])
    counts = np.array([len(o) for o in outcomes], dtype=float)
    var = np.array([np.var(o, ddof=1) if len(o) > 1 else np.nan for o in outcomes])
    return means, counts, var


def test_one_run_per_task_is_the_textbook_wilson_interval() -> None:
    est = task_estimate(np.array([1.0] * 9 + [0.0]), "binary")
    assert est.method == "Wilson" and (est.low, est.high) == pytest.approx(wilson_interval(9, 10))


@pytest.mark.parametrize(
    "outcomes",
    [[[1, 1, 1]] * 10, [[0, 0]] * 6, [[1, 1, 0]] * 8, [[1, 0]] * 5],
    ids=["all pass, K=3", "all fail, K=2", "every task at 2 of 3", "every task at 1 of 2"],
)
def test_no_pass_rate_interval_has_zero_width(outcomes: list[list[int]]) -> None:
    means, counts, var = rates(outcomes)
    est = task_estimate(means, "binary", counts, var)
    assert est.high - est.low > 0.05 and est.low <= est.mean <= est.high
    expected = proportion_confint(means.mean() * counts.sum(), counts.sum(), method="wilson")
    assert (est.low, est.high) == pytest.approx(expected)  # no spread between tasks: pooled episodes
    assert est.method.startswith("Wilson, design effect 1.00")


def test_all_pass_with_repeats_is_never_wider_than_with_one_run() -> None:
    one = task_estimate(np.ones(10), "binary")
    three = task_estimate(np.ones(10), "binary", np.full(10, 3.0), np.zeros(10))
    assert (one.low, one.high) == pytest.approx((0.7225, 1.0), abs=1e-3)
    assert three.low > one.low and three.high == pytest.approx(1.0)


@pytest.mark.parametrize("extra", [1, 0], ids=["passing repeat", "failing repeat"])
def test_a_second_repeat_on_one_task_moves_the_interval_only_a_little(extra: int) -> None:
    """The boundary between one run per task (Wilson) and repeats (design effect) is continuous."""
    outcomes = [[1]] * 6 + [[0]] * 4
    before = task_estimate(rates(outcomes)[0], "binary")
    outcomes[0] = [1, extra]
    means, counts, var = rates(outcomes)
    after = task_estimate(means, "binary", counts, var)
    shift = abs(after.mean - before.mean)
    assert abs(after.low - before.low) <= shift + 0.02 and abs(after.high - before.high) <= shift + 0.02
    t_low, _ = stats.t.interval(0.95, 9, loc=means.mean(), scale=stats.sem(means))
    assert abs(t_low - before.low) > 0.05  # switching to t over task means would have jumped


def test_clustered_tasks_are_worth_fewer_episodes() -> None:
    """Tasks that always pass or always fail: 3 runs of a task tell little more than one."""
    means, counts, var = rates([[1, 1, 1]] * 6 + [[0, 0, 0]] * 4)
    n_eff, deff = effective_count(means, counts)
    assert deff == pytest.approx(3.0) and n_eff < 10
    est = task_estimate(means, "binary", counts, var)
    assert est.high - est.low > wilson_interval(6, 10).high - wilson_interval(6, 10).low


def test_fixed_tasks_count_only_run_to_run_noise() -> None:
    means, counts, var = rates([[1, 1, 0]] * 3 + [[0, 0, 1]] * 3 + [[1, 1, 1]] * 4)
    population = task_estimate(means, "binary", counts, var)
    fixed = task_estimate(means, "binary", counts, var, estimand="fixed_tasks")
    assert fixed.high - fixed.low < population.high - population.low
    assert fixed.method.startswith("fixed tasks")
    with pytest.raises(AnalysisError, match="repeats"):
        task_estimate(means, "binary", estimand="fixed_tasks")
    with pytest.raises(AnalysisError, match="estimand"):
        task_estimate(means, "binary", estimand="tasks")  # type: ignore[arg-type]


def test_scores_use_t_and_fall_back_to_pooled_wilson_without_spread() -> None:
    x = np.array([0.2, 0.9, 0.5, 0.7])
    est = task_estimate(x, "proportion")
    assert est.method == "t over task means"
    low, high = stats.t.interval(0.95, 3, loc=x.mean(), scale=stats.sem(x))
    assert (est.low, est.high) == pytest.approx((low, min(high, 1.0)))
    flat = task_estimate(np.full(4, 1.0), "proportion", np.full(4, 2.0))
    assert flat.method.startswith("pooled Wilson") and flat.low < 1.0


def test_amounts_use_a_cluster_bootstrap_and_say_when_undefined() -> None:
    x = np.random.default_rng(1).lognormal(size=12)
    assert task_estimate(x, "amount", n_resamples=199).method.startswith("cluster bootstrap")
    flat = task_estimate(np.full(5, 3.0), "amount")
    assert np.isnan(flat.low) and flat.method == "undefined: every task mean is the same"
    assert task_estimate(np.array([]), "binary").method == "no valid episodes"
