"""Interval primitives over task-level values, each a thin wrapper of scipy or statsmodels.

``task_estimate`` (in ``estimate.py``) picks among them by metric kind; docs/statistics.md says why.

Example::

    wilson_interval(7, 10)                      # Interval(low=0.397..., high=0.892...)
    t_interval(np.array([0.2, 0.4, 0.9]))
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray
from scipy import stats

from coder_eval.errors import AnalysisError

FloatArray = NDArray[np.float64]
N_RESAMPLES = 9_999
SEED = 20_241_105
SMALL_T = 50
NAN = float("nan")


class Interval(NamedTuple):
    """A two-sided interval: ``low, high = wilson_interval(3, 10)`` (Example)."""

    low: float
    high: float


class Estimate(NamedTuple):
    """A point estimate with its interval and the method that produced the interval.

    Example: ``task_estimate(np.array([1.0, 0.0]), "binary")`` -> ``Estimate(0.5, 0.09, 0.91, 'Wilson')``
    """

    mean: float
    low: float
    high: float
    method: str


def wilson_interval(k: int, n: int, confidence: float = 0.95) -> Interval:
    """Wilson score interval for k successes in n trials (``binomtest(k, n).proportion_ci``).

    Example: ``wilson_interval(0, 10)`` -> ``Interval(low=0.0, high=0.277...)``
    """
    if n < 1 or not 0 <= k <= n:
        raise AnalysisError(f"wilson_interval needs 0 <= k <= n and n >= 1 (got k={k}, n={n})")
    ci = stats.binomtest(int(k), int(n)).proportion_ci(confidence_level=confidence, method="wilson")
    return Interval(float(ci.low), float(ci.high))


def no_spread(values: FloatArray) -> bool:
    """True when all values are equal up to rounding (1/3 − 0 and 2/3 − 1/3 differ in the last bit)."""
    return len(values) < 2 or float(np.ptp(values)) <= 1e-9 * max(1.0, float(np.max(np.abs(values))))


def t_interval(values: FloatArray, confidence: float = 0.95) -> Interval:
    """Student-t interval for the mean of ``values`` with len − 1 df; NaN for fewer than 2 values.

    Values without spread give the point itself (callers fall back to another interval).
    Example: ``t_interval(np.array([0.2, 0.4, 0.9]))``
    """
    if len(values) < 2:
        return Interval(NAN, NAN)
    mean = float(np.mean(values))
    if no_spread(values):
        return Interval(mean, mean)
    se = float(stats.sem(values))
    low, high = stats.t.interval(confidence, len(values) - 1, loc=mean, scale=se)
    return Interval(float(low), float(high))


def bootstrap_interval(
    data: tuple[FloatArray, ...],
    statistic: Callable[..., Any],
    confidence: float = 0.95,
    n_resamples: int = N_RESAMPLES,
    seed: int = SEED,
) -> tuple[Interval, str]:
    """Seeded BCa bootstrap over tasks (paired samples), percentile when BCa is NaN; says which.

    ``statistic(*arrays, axis=-1)`` must be vectorised. Example::

        bootstrap_interval((x,), np.mean)   # (Interval(...), 'cluster bootstrap BCa')
    """
    if len(data[0]) < 2:
        return Interval(NAN, NAN), "bootstrap undefined with fewer than 2 tasks"
    for method, label in (("BCa", "cluster bootstrap BCa"), ("percentile", "cluster bootstrap percentile")):
        with warnings.catch_warnings(), np.errstate(divide="ignore", invalid="ignore"):
            warnings.simplefilter("ignore")  # degenerate data: BCa is NaN and we fall back below
            res = stats.bootstrap(
                data,
                statistic,
                n_resamples=n_resamples,
                paired=True,
                vectorized=True,
                confidence_level=confidence,
                method=method,
                rng=np.random.default_rng(seed),
            )
        ci = Interval(float(res.confidence_interval.low), float(res.confidence_interval.high))
        if not (np.isnan(ci.low) or np.isnan(ci.high)):
            return ci, label if method == "BCa" else f"{label} (BCa undefined)"
    return ci, "cluster bootstrap undefined (degenerate resamples)"
