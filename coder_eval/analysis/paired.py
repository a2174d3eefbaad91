"""Paired tests over per-task values of two variants, each a thin wrapper of scipy.

``paired_test`` picks the STATS.md method from the metric kind and the number of repeats; it is the
single code path behind ``compare`` (and the type-I benchmark).

Example::

    paired_test(np.array([1.0, 0, 1, 1]), np.array([0.0, 0, 1, 0]), "binary", repeats=1)
"""

from __future__ import annotations

import warnings
from typing import NamedTuple

import numpy as np
from scipy import stats

from coder_eval.analysis.intervals import (
    N_RESAMPLES,
    NAN,
    SEED,
    SMALL_T,
    FloatArray,
    bootstrap_interval,
    t_interval,
)
from coder_eval.analysis.metrics import MetricKind

EXACT_MAX_TASKS = 20
ALPHA = 0.05
POWER = 0.8


class PairedResult(NamedTuple):
    """A paired difference (a − b) with its interval, test and the methods used."""

    diff: float
    low: float
    high: float
    p_value: float
    test: str
    method: str
    p_value_t: float
    """Paired t-test p-value, a cross-check."""


class RatioResult(NamedTuple):
    """Ratio of means (a / b) with a paired bootstrap interval."""

    ratio: float
    low: float
    high: float


def mcnemar_exact(a_only: int, b_only: int) -> float:
    """Exact McNemar p-value: ``binomtest(a_only, a_only + b_only)``; 1.0 with no discordant pair.

    Example: ``mcnemar_exact(6, 0)`` -> ``0.03125``
    """
    n = a_only + b_only
    return 1.0 if n == 0 else float(stats.binomtest(a_only, n, 0.5).pvalue)


def sign_flip_p(d: FloatArray, n_resamples: int = N_RESAMPLES, seed: int = SEED) -> float:
    """Two-sided sign-flip permutation p-value for mean(d) = 0; exact when len(d) <= 20.

    Zero differences are dropped first: flipping their sign changes nothing, so the p-value is the
    same and the exact enumeration is 2^(non-zero) instead of 2^T. Example:
    ``sign_flip_p(np.array([0.5, 1.0, 0.25]))`` -> ``0.25``
    """
    if len(d) == 0:
        return NAN
    nonzero = d[d != 0]
    if len(nonzero) < 2:  # one non-zero difference: both of its signs are as extreme as observed
        return 1.0
    resamples = np.inf if is_exact(d) else n_resamples
    res = stats.permutation_test(
        (nonzero,),
        np.mean,
        permutation_type="samples",
        n_resamples=resamples,
        vectorized=True,
        rng=np.random.default_rng(seed),
    )
    return float(min(res.pvalue, 1.0))


def is_exact(d: FloatArray) -> bool:
    """The sign-flip test enumerates every flip for at most 20 tasks (STATS.md)."""
    return len(d) <= EXACT_MAX_TASKS


def bootstrap_p(d: FloatArray, n_resamples: int = N_RESAMPLES, seed: int = SEED) -> float:
    """Two-sided bootstrap p-value for mean(d) = 0: resample d centred on 0, count |mean*| >= |mean(d)|.

    Example: ``bootstrap_p(np.array([3.0, 1.0, 2.0, 4.0]))``
    """
    if len(d) < 2:
        return NAN
    observed = abs(float(np.mean(d)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # all-equal d is degenerate; the count below still holds
        res = stats.bootstrap(
            (d - np.mean(d),),
            np.mean,
            n_resamples=n_resamples,
            method="percentile",
            vectorized=True,
            rng=np.random.default_rng(seed),
        )
    extreme = np.abs(res.bootstrap_distribution) >= observed - 1e-12 * max(observed, 1.0)
    return float((1 + extreme.sum()) / (1 + n_resamples))


def paired_t_p(d: FloatArray) -> float:
    """Paired t-test p-value (``ttest_1samp(d, 0)``); 1.0 when every difference is 0."""
    if len(d) < 2:
        return NAN
    if np.all(d == d[0]):
        return 1.0 if d[0] == 0 else 0.0
    return float(stats.ttest_1samp(d, 0.0).pvalue)


def paired_test(
    xa: FloatArray,
    xb: FloatArray,
    kind: MetricKind,
    repeats: int = 1,
    confidence: float = 0.95,
    n_resamples: int = N_RESAMPLES,
    seed: int = SEED,
) -> PairedResult:
    """The STATS.md paired test of per-task values ``xa`` vs ``xb`` (same tasks, same order).

    Binary with one run per task: exact McNemar, t interval on d; binary with repeats and
    proportions: sign-flip permutation, t interval on d; amounts: paired bootstrap (BCa interval,
    bootstrap p). Example: ``paired_test(xa, xb, "amount").p_value``
    """
    d = xa - xb
    if len(d) == 0:
        return PairedResult(NAN, NAN, NAN, NAN, "none", "no task has valid episodes in both variants", NAN)
    diff = float(np.mean(d))
    p_t = paired_t_p(d)
    if kind == "amount":
        ci, method = bootstrap_interval((d,), np.mean, confidence, n_resamples, seed)
        if len(d) < SMALL_T:  # heavy-tailed amounts: every interval under-covers with few tasks
            method += f"; approximate (T={len(d)} < {SMALL_T})"
        return PairedResult(
            diff, ci.low, ci.high, bootstrap_p(d, n_resamples, seed), "paired bootstrap", method, p_t
        )
    low, high = t_interval(d, confidence)
    low, high = max(low, -1.0), min(high, 1.0)  # a difference of proportions lies in [-1, 1]
    if kind == "binary" and repeats == 1:
        p = mcnemar_exact(int((d > 0).sum()), int((d < 0).sum()))
        return PairedResult(diff, low, high, p, "exact McNemar", "t over paired differences", p_t)
    p = sign_flip_p(d, n_resamples, seed)
    test = "sign-flip permutation" + (" (exact)" if is_exact(d) else f" ({n_resamples} resamples)")
    return PairedResult(diff, low, high, p, test, "t over paired differences", p_t)


def ratio_of_means(
    xa: FloatArray, xb: FloatArray, confidence: float = 0.95, n_resamples: int = N_RESAMPLES, seed: int = SEED
) -> RatioResult:
    """mean(xa) / mean(xb) with a paired cluster bootstrap interval.

    Example: ``ratio_of_means(np.array([2.0, 4.0]), np.array([1.0, 2.0])).ratio`` -> ``2.0``
    """
    if len(xa) == 0 or np.mean(xb) == 0:
        return RatioResult(NAN, NAN, NAN)

    def ratio(a: FloatArray, b: FloatArray, axis: int = -1) -> FloatArray:
        return np.asarray(np.mean(a, axis=axis) / np.mean(b, axis=axis))

    ci, _ = bootstrap_interval((xa, xb), ratio, confidence, n_resamples, seed)
    return RatioResult(float(np.mean(xa) / np.mean(xb)), ci.low, ci.high)


def paired_mde(d: FloatArray, power: float = POWER, alpha: float = ALPHA) -> float:
    """Minimum detectable effect ``(z_{α/2} + z_β) · sd(d) / √T``; NaN with fewer than 2 tasks.

    Example: ``paired_mde(np.array([0.0, 1.0, -1.0, 0.0]))``
    """
    if len(d) < 2:
        return NAN
    return float(z_sum(power, alpha) * np.std(d, ddof=1) / np.sqrt(len(d)))


def z_sum(power: float = POWER, alpha: float = ALPHA) -> float:
    """``z_{α/2} + z_β`` from the normal quantile function; 2.80 for α = 0.05, power 0.8."""
    return float(stats.norm.ppf(1 - alpha / 2) + stats.norm.ppf(power))
