import numpy as np
import pytest
from scipy import stats

from coder_eval.analysis import wilson_interval
from coder_eval.analysis.stats.intervals import bootstrap_interval, t_interval
from coder_eval.errors import AnalysisError


@pytest.mark.parametrize(("k", "n"), [(0, 10), (10, 10), (0, 1), (1, 1), (7, 10), (33, 120)])
def test_wilson_agrees_with_scipy(k: int, n: int) -> None:
    expected = stats.binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    assert wilson_interval(k, n) == pytest.approx((expected.low, expected.high))


def test_wilson_refuses_impossible_counts() -> None:
    with pytest.raises(AnalysisError):
        wilson_interval(0, 0)
    with pytest.raises(AnalysisError):
        wilson_interval(5, 4)


@pytest.mark.parametrize("values", [[0.2, 0.4, 0.9], [1.0, 0.0], [0.5, 0.5, 0.75, 1.0, 0.0, 0.25]])
def test_t_interval_agrees_with_scipy(values: list[float]) -> None:
    x = np.array(values)
    expected = stats.t.interval(0.95, len(x) - 1, loc=x.mean(), scale=stats.sem(x))
    assert t_interval(x) == pytest.approx(expected)


def test_t_interval_is_a_point_without_spread_and_undefined_for_one_value() -> None:
    assert t_interval(np.array([0.5, 0.5, 0.5])) == (0.5, 0.5)
    assert all(np.isnan(t_interval(np.array([0.5]))))


def test_bootstrap_falls_back_to_percentile_when_bca_is_degenerate() -> None:
    ci, method = bootstrap_interval((np.array([3.0, 3.0, 3.0]),), np.mean, n_resamples=199)
    assert ci == (3.0, 3.0) and "percentile" in method


def test_bootstrap_is_seeded() -> None:
    x = np.random.default_rng(1).lognormal(size=40)
    assert bootstrap_interval((x,), np.mean, n_resamples=999) == bootstrap_interval(
        (x,), np.mean, n_resamples=999
    )
