import itertools

import numpy as np
import pytest
from scipy import stats

from coder_eval.analysis.stats.signflip import EXACT_MAX_NONZERO, abs_tail, lattice, sign_flip


def brute_force(d: np.ndarray) -> float:
    """P(|Σ ±d_i| ≥ |Σ d_i|) over every sign pattern of the non-zero differences."""
    nonzero = d[d != 0]
    if len(nonzero) == 0:
        return 1.0
    signs = np.array(list(itertools.product((1.0, -1.0), repeat=len(nonzero))))
    sums = signs @ np.abs(nonzero)
    return float(np.mean(np.abs(sums) >= abs(nonzero.sum()) - 1e-9))


CASES = {
    "thirds": np.array([1, 2 / 3, 1 / 3, 1 / 3, -1 / 3, 0, 2 / 3, 1, -2 / 3, 1 / 3, 0, 1 / 3]),
    "binary": np.array([1.0, 1, 0, 1, -1, 1, 1, 0, 1, 1, 1, 0, 1]),
    "halves and quarters": np.array([0.5, -0.25, 0.75, 0.25, 0.5, 0.5, -0.5, 0.25, 1.0]),
    "continuous": np.random.default_rng(1).normal(0.4, 1.0, 14),
    "continuous with ties": np.array([0.3, 0.3, -0.3, 1.7, 1.7, 0.0, 2.2, -0.9, 0.3, 1.1, 0.4]),
    "sum exactly zero": np.array([1.0, 1 / 3, 2 / 3, 1 / 3, -1 / 3, -1.0, 1 / 3, -2 / 3, -1.0, 1 / 3]),
}


@pytest.mark.parametrize("name", CASES)
def test_exact_p_value_equals_full_enumeration(name: str) -> None:
    d = CASES[name]
    result = sign_flip(d)
    assert result.exact and result.n_nonzero == int(np.count_nonzero(d))
    assert result.p_value == pytest.approx(brute_force(d), abs=1e-12)


def test_textbook_values() -> None:
    assert sign_flip(np.ones(6)).p_value == pytest.approx(2 / 64)  # 0.03125: the smallest p with 6 tasks
    assert sign_flip(np.ones(5)).p_value == pytest.approx(2 / 32)  # 5 tasks can never reach 0.05
    assert sign_flip(np.array([0.5, 1.0, 0.25])).p_value == pytest.approx(0.25)
    assert sign_flip(np.array([0.0, 0.0])).p_value == 1.0
    assert np.isnan(sign_flip(np.array([])).p_value)


def test_agrees_with_scipy_exact_permutation_test_where_that_is_feasible() -> None:
    d = CASES["continuous"]
    scipy_p = stats.permutation_test(
        (d,), np.mean, permutation_type="samples", n_resamples=np.inf, vectorized=True
    ).pvalue
    assert sign_flip(d).p_value == pytest.approx(scipy_p)


def test_zero_differences_are_dropped() -> None:
    d = np.array([0.5, 1.0, -0.25, 0.75])
    padded = np.concatenate([d, np.zeros(30)])
    assert sign_flip(padded) == sign_flip(d)


def test_lattice_data_is_exact_at_any_size() -> None:
    result = sign_flip(np.ones(200))
    assert result.exact and result.p_value == pytest.approx(2.0**-199)
    thirds = np.tile([1 / 3, 2 / 3, -1 / 3, 1.0, 0.0], 60)
    assert sign_flip(thirds).exact


def test_continuous_data_beyond_the_exact_limit_uses_seeded_monte_carlo() -> None:
    d = np.random.default_rng(2).normal(0.0, 1.0, EXACT_MAX_NONZERO + 5)
    first, again = sign_flip(d, n_resamples=999, seed=3), sign_flip(d, n_resamples=999, seed=3)
    assert not first.exact and first == again and first.label(999) == "999 resamples"
    assert first.p_value == pytest.approx(
        stats.permutation_test((d,), np.mean, permutation_type="samples", n_resamples=9_999).pvalue, abs=0.06
    )


def test_lattice_finds_the_common_denominator() -> None:
    grid = lattice(np.array([1 / 3, 0.5, 1.0]))
    assert grid is not None and grid.denominator == 6 and grid.units.tolist() == [2, 3, 6]
    assert lattice(np.array([0.1234567891, 1.0])) is None


def test_abs_tail_is_the_distribution_of_the_absolute_sum() -> None:
    assert abs_tail(np.array([1, 1])).tolist() == pytest.approx([1.0, 0.5, 0.5])
    assert abs_tail(np.array([1, 2])).tolist() == pytest.approx([1.0, 1.0, 0.5, 0.5])
