"""The sign-flip test inverted: checked against scipy's exact permutation test at every end, and the
promise the verdicts rest on (the interval excludes 0 exactly when p < α) on many random cases."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from coder_eval.analysis.stats.inversion import (
    BisectedFamily,
    SubsetMeans,
    inverted,
    sign_flip_family,
)
from coder_eval.analysis.stats.signflip import sign_flip


def scipy_p(d: np.ndarray, delta: float) -> float:
    """Two-sided exact sign-flip p-value of H0: symmetric about ``delta`` (every pattern enumerated)."""
    result = stats.permutation_test(
        (d - delta,), np.sum, permutation_type="samples", n_resamples=np.inf, alternative="two-sided"
    )
    return float(result.pvalue)


def beside(end: float, centre: float, step: float) -> float:
    """A point ``step`` beyond an interval end, away from the centre (negative: inside)."""
    return end - step if end < centre else end + step


@pytest.mark.parametrize(
    "d",
    [
        np.array([1.0, 1, 1, 1, 1, 1, 0, 1]),  # one run per task: McNemar's d ∈ {-1, 0, 1}
        np.array([1, 2, 0, -1, 1, 2, 1, 3, 0, 1]) / 3,  # three repeats: a lattice of 1/3
        np.random.default_rng(3).normal(0.4, 1.0, 11),  # continuous: every subset mean listed
        np.random.default_rng(4).normal(0.4, 1.0, 18),  # continuous: bisection
    ],
    ids=["mcnemar", "thirds", "listed", "bisected"],
)
def test_each_end_is_the_last_delta_the_exact_test_accepts(d: np.ndarray) -> None:
    family = sign_flip_family(d)
    low, high = family.interval(0.05)
    centre = float(np.mean(d))
    assert low < centre < high
    for end in (low, high):  # an end is a subset mean (bisected: within 1e-7 of one), where p jumps
        assert scipy_p(d, beside(end, centre, -1e-8)) >= 0.05
        assert scipy_p(d, beside(end, centre, 1e-5)) < 0.05  # bisection: within 1e-7 of the jump
    assert family.p_value(0.0) == pytest.approx(scipy_p(d, 0.0))
    assert family.p_value(0.0) == pytest.approx(sign_flip(d).p_value)


def test_the_family_is_chosen_as_the_test_is_computed() -> None:
    assert isinstance(sign_flip_family(np.array([1.0, 0, -1, 1])), SubsetMeans)
    assert isinstance(sign_flip_family(np.random.default_rng(1).normal(size=20)), BisectedFamily)
    mc = sign_flip_family(np.random.default_rng(1).normal(size=40), n_resamples=999)
    assert mc.label == "999 resamples" and not mc.exact


@pytest.mark.parametrize("n", [1, 3, 5])
def test_too_few_tasks_to_reject_anything_give_an_unbounded_interval(n: int) -> None:
    """With 5 tasks the smallest possible p is 2 / 32 = 0.0625: no δ is rejected at 0.05."""
    low, high = sign_flip_family(np.ones(n)).interval(0.05)
    assert (low, high) == (-np.inf, np.inf)


def test_every_task_equal_leaves_only_that_value() -> None:
    low, high = sign_flip_family(np.full(8, 0.5)).interval(0.05)
    assert low == high == 0.5


def test_the_interval_excludes_zero_exactly_when_the_test_rejects_it() -> None:
    rng = np.random.default_rng(11)
    for trial in range(400):
        n = int(rng.integers(1, 45))
        kind = trial % 4
        if kind == 0:
            d = rng.integers(-1, 2, n).astype(float)
        elif kind == 1:
            d = rng.integers(-3, 4, n) / 3 + (rng.random() < 0.5) / 3
        elif kind == 2:
            d = rng.normal(rng.normal(0, 0.5), 1.0, n)
        else:
            d = np.round(rng.normal(0.2, 1.0, n), 1)
        for alpha in (0.05, 0.01):
            r = inverted(sign_flip_family(d, n_resamples=499), alpha)
            assert (r.p_value < alpha) == (not r.low <= 0 <= r.high), (d, alpha, r)


def test_a_lower_level_gives_a_wider_interval() -> None:
    family = sign_flip_family(np.array([1, 2, 0, -1, 1, 2, 1, 3, 0, 1, 2, 2]) / 3)
    wide, narrow = family.interval(0.01), family.interval(0.05)
    assert wide.low <= narrow.low and narrow.high <= wide.high
