import numpy as np
import pytest
from scipy import stats

from coder_eval.analysis import compare
from coder_eval.analysis.stats.amounts import MIN_TASKS, amount_test
from coder_eval.analysis.stats.inversion import sign_flip_family
from coder_eval.analysis.stats.signflip import sign_flip
from tests.analysis.builders import episodes_frame

RNG = np.random.default_rng(7)
COST_B = RNG.lognormal(0.0, 1.0, 12)
COST_A = COST_B * RNG.lognormal(0.3, 0.2, 12)


def test_the_verdict_rests_on_log_ratios_with_an_exact_sign_flip_and_its_inverted_interval() -> None:
    r = np.log(COST_A) - np.log(COST_B)
    result = amount_test(COST_A, COST_B)
    assert result.basis == "ratio" and result.test == "sign-flip on log ratios (exact)"
    assert result.p_value == pytest.approx(sign_flip(r).p_value)
    log_low, log_high = sign_flip_family(r).interval(0.05)
    assert (result.ratio, result.ratio_low, result.ratio_high) == pytest.approx(
        (np.exp(r.mean()), np.exp(log_low), np.exp(log_high))
    )
    assert result.ratio_method == "inverted sign-flip test on log ratios (exact)"
    assert sign_flip(r - log_low).p_value >= 0.05 > sign_flip(r - log_low + 1e-6).p_value  # its end
    d = COST_A - COST_B
    assert (result.diff, result.low, result.high) == pytest.approx(
        (d.mean(), *stats.t.interval(0.95, len(d) - 1, loc=d.mean(), scale=stats.sem(d)))
    )
    assert result.diff_method.startswith("descriptive (not the verdict's): t over paired differences")


def test_a_zero_task_mean_falls_back_to_differences() -> None:
    a, b = np.array([0.0, 2.0, 3.0, 5.0]), np.array([1.0, 1.0, 2.0, 2.0])
    result = amount_test(a, b)
    assert (
        result.basis == "difference"
        and np.isnan(result.ratio)
        and "ratios are undefined" in result.ratio_method
    )
    assert result.p_value == pytest.approx(sign_flip(a - b).p_value)
    assert result.diff_method == "inverted sign-flip test on differences (exact)"


def test_negative_amounts_say_a_task_mean_is_negative() -> None:
    """A numeric column can hold negative values (a score delta, say): ratios are undefined, and the
    reason says so rather than blaming a zero."""
    a, b = np.array([-1.0, 2.0, 3.0, 5.0, 1.0, 2.0]), np.array([1.0, 1.0, 2.0, 2.0, 0.5, 1.0])
    result = amount_test(a, b)
    assert result.basis == "difference" and "a task mean is negative" in result.ratio_method
    assert result.low <= result.diff <= result.high


def test_two_tasks_never_give_a_verdict() -> None:
    """Two tasks where b costs 60 to 100 times less: p = 2 / 4, and no interval collapses to a point."""
    df = episodes_frame({v: {"t1": ["pass"] * 3, "t2": ["pass"] * 3} for v in ("a", "b")})
    df["cost_usd"] = [1.0, 1.1, 0.9, 2.0, 2.2, 1.8, 0.01, 0.011, 0.009, 0.03, 0.022, 0.018]
    c = compare(df, "a", "b", "cost_usd")
    assert c.p_value == 0.5 and c.verdict == "inconclusive" and c.min_tasks == MIN_TASKS
    assert c.ratio_ci_low < c.ratio_ci_high and c.ci_low < c.ci_high


def test_no_verdict_below_the_minimum_number_of_tasks() -> None:
    for n, called in ((MIN_TASKS - 1, "inconclusive"), (MIN_TASKS, "b_better")):
        df = episodes_frame({v: {f"t{i}": ["pass"] for i in range(n)} for v in ("a", "b")})
        df["cost_usd"] = np.concatenate([np.arange(1, n + 1) * 10.0 + np.arange(n), np.arange(1, n + 1)])
        assert compare(df, "a", "b", "cost_usd").verdict == called


def test_a_clear_saving_over_enough_tasks_is_called_on_the_ratio() -> None:
    df = episodes_frame({v: {f"t{i}": ["pass"] for i in range(12)} for v in ("a", "b")})
    df["cost_usd"] = np.concatenate([COST_B * RNG.lognormal(np.log(0.5), 0.1, 12), COST_B])
    c = compare(df, "a", "b", "cost_usd")
    assert (c.basis, c.verdict) == ("ratio", "a_better") and c.ratio == pytest.approx(0.5, rel=0.1)
    assert c.mde_ratio > 1 and np.isnan(c.mde)


def test_the_same_ratio_on_every_task_rests_the_verdict_on_the_differences() -> None:
    result = amount_test(COST_B * 0.5, COST_B)
    assert result.basis == "difference" and result.ratio == pytest.approx(0.5)
    assert np.isnan(result.ratio_low) and result.ratio_method == "undefined: every task has the same ratio"
    assert result.low < result.high < 0 and result.diff_method.startswith("inverted sign-flip test")
