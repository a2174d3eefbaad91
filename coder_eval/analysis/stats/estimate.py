"""``task_estimate``: the mean of per-task means and its interval, the one code path behind ``summarize``.

Two views of what is estimated (``estimand``):

- ``"population"`` (default): the mean over a population of tasks like these. The spread between
  task means is part of the uncertainty.
- ``"fixed_tasks"``: the mean over exactly these tasks; only the run-to-run noise within each task
  counts (it needs repeats), so the interval is narrower.

Pass rates use a Wilson score interval on an effective number of episodes (the design effect of
clustering in tasks); one run per task gives the plain Wilson interval, and the interval changes
smoothly as tasks get more repeats. Scores in [0, 1] use t over task means; amounts a cluster
bootstrap. An interval from finite data never has zero width: when every task mean is the same,
a named fallback is used (or the interval is NaN and says why).

Example::

    task_estimate(np.array([1.0, 0.5, 0.0]), "binary", counts=np.array([2, 2, 2]))
"""

from __future__ import annotations

from typing import Literal, NamedTuple

import numpy as np
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from coder_eval.analysis.stats.intervals import (
    N_RESAMPLES,
    NAN,
    SEED,
    SMALL_T,
    FloatArray,
    Interval,
    bootstrap_interval,
    no_spread,
    t_interval,
    wilson_interval,
)
from coder_eval.analysis.stats.metrics import MetricKind
from coder_eval.errors import AnalysisError

Estimand = Literal["population", "fixed_tasks"]
DEFF_RELIABLE_T = 20
"""Below this many tasks the design-effect Wilson interval is labelled approximate (it under-covers
by a few points with very uneven tasks in ``benchmarks/ci_coverage.py``)."""
ESTIMANDS = ("population", "fixed_tasks")


class Estimate(NamedTuple):
    """A point estimate with its interval and the method that produced the interval.

    Example: ``task_estimate(np.array([1.0, 0.0]), "binary")`` -> ``Estimate(0.5, 0.09, 0.91, 'Wilson')``
    """

    mean: float
    low: float
    high: float
    method: str


class EffectiveCount(NamedTuple):
    """Episodes a clustered mean is worth: ``n_eff`` = p(1 − p) / Var(mean), and the design effect."""

    n_eff: float
    design_effect: float


def check_estimand(estimand: str) -> None:
    """Raise AnalysisError unless ``estimand`` is ``population`` or ``fixed_tasks``."""
    if estimand not in ESTIMANDS:
        raise AnalysisError(f"estimand must be one of {', '.join(ESTIMANDS)} (got {estimand!r})")


def binomial_count(counts: FloatArray) -> float:
    """T² / Σ 1/K_i: episodes giving the mean of task means its binomial variance (N when K is equal)."""
    return float(len(counts) ** 2 / np.sum(1.0 / counts))


def effective_count(means: FloatArray, counts: FloatArray, confidence: float = 0.95) -> EffectiveCount:
    """Effective episodes of the mean of task means of a pass rate, from the spread of task means.

    deff = max(1, Var̂_tasks / Var_binomial) with Var̂_tasks = Σ(m_i − p)² / T²; the excess over 1 is
    estimated from T − 1 degrees of freedom, so it is scaled by (t_{T−1} / z)² · T / (T − 1). With one
    run per task deff is exactly 1 and n_eff = T. Example:
    ``effective_count(np.array([1.0, 0.0, 2 / 3]), np.array([3, 3, 3])).n_eff``
    """
    t, p = len(means), float(np.mean(means))
    n_bin = binomial_count(counts)
    binomial_var = p * (1 - p) / n_bin
    spread_var = float(np.sum((means - p) ** 2)) / t**2
    deff = 1.0 if binomial_var == 0 else max(1.0, spread_var / binomial_var)
    if t < 2 or deff == 1.0:
        return EffectiveCount(n_bin, 1.0)
    z = stats.norm.ppf(0.5 + confidence / 2)
    inflation = (stats.t.ppf(0.5 + confidence / 2, t - 1) / z) ** 2 * t / (t - 1)
    return EffectiveCount(n_bin / (1 + (deff - 1) * inflation), deff)


def wilson_effective(p: float, n_eff: float, confidence: float = 0.95) -> Interval:
    """Wilson score interval for a proportion p worth ``n_eff`` episodes (statsmodels, real counts)."""
    low, high = proportion_confint(p * n_eff, n_eff, alpha=1 - confidence, method="wilson")
    return Interval(0.0 if p == 0 else max(float(low), 0.0), 1.0 if p == 1 else min(float(high), 1.0))


def pass_rate_interval(means: FloatArray, counts: FloatArray, confidence: float = 0.95) -> Estimate:
    """Population view of a pass rate: Wilson with one run per task, else Wilson on n_eff episodes."""
    p = float(np.mean(means))
    if np.all(counts == 1):
        return Estimate(p, *wilson_interval(round(float(means.sum())), len(means), confidence), "Wilson")
    n_eff, deff = effective_count(means, counts, confidence)
    method = f"Wilson, design effect {deff:.2f} (n_eff {n_eff:.1f} of {int(counts.sum())} episodes)"
    t = len(means)
    flag = f"; approximate (T={t} < {DEFF_RELIABLE_T})" if t < DEFF_RELIABLE_T else ""
    return Estimate(p, *wilson_effective(p, n_eff, confidence), method + flag)


def within_variances(variances: FloatArray, counts: FloatArray) -> FloatArray:
    """Per-task variance of the task mean from repeats, s²_i / K_i; tasks with one run get the pooled s²."""
    repeated = counts >= 2
    if not repeated.any():
        raise AnalysisError("the fixed-task view needs repeats: no task has two valid runs")
    s2 = np.where(repeated, variances, np.average(variances[repeated], weights=counts[repeated] - 1))
    return np.asarray(s2 / counts, dtype=float)


def fixed_task_estimate(
    means: FloatArray, counts: FloatArray, variances: FloatArray, kind: MetricKind, confidence: float
) -> Estimate:
    """The fixed-task view: only the noise between repeats of each task counts."""
    p, t = float(np.mean(means)), len(means)
    var = float(np.sum(within_variances(variances, counts))) / t**2
    if kind == "binary":
        if var == 0 or p * (1 - p) == 0:
            n_eff, label = binomial_count(counts), "pooled Wilson (no run-to-run variation)"
        else:
            n_eff, label = (
                p * (1 - p) / var,
                f"Wilson on within-task variance (n_eff {p * (1 - p) / var:.1f})",
            )
        return Estimate(p, *wilson_effective(p, n_eff, confidence), f"fixed tasks: {label}")
    if var == 0:
        return fallback(p, counts, kind, confidence, "fixed tasks: no run-to-run variation")
    df = max(float(np.sum(np.maximum(counts - 1, 0))), 1.0)
    low, high = stats.t.interval(confidence, df, loc=p, scale=np.sqrt(var))
    if kind == "proportion":
        low, high = max(low, 0.0), min(high, 1.0)
    return Estimate(p, float(low), float(high), f"fixed tasks: t on within-task variance ({df:.0f} df)")


def fallback(p: float, counts: FloatArray, kind: MetricKind, confidence: float, why: str) -> Estimate:
    """No spread to estimate from: Wilson on pooled episodes for values in [0, 1], else undefined."""
    if kind == "amount":
        return Estimate(p, NAN, NAN, f"undefined: {why}")
    return Estimate(p, *wilson_effective(p, binomial_count(counts), confidence), f"pooled Wilson ({why})")


def task_estimate(
    means: FloatArray,
    kind: MetricKind,
    counts: FloatArray | None = None,
    variances: FloatArray | None = None,
    confidence: float = 0.95,
    n_resamples: int = N_RESAMPLES,
    seed: int = SEED,
    estimand: Estimand = "population",
) -> Estimate:
    """Mean of per-task means with the interval for the metric kind and estimand.

    ``counts`` are the runs behind each task mean (default 1 each), ``variances`` their variance
    between repeats (needed by ``estimand="fixed_tasks"``).

    Example: ``task_estimate(np.array([1.0, 0.0, 1.0]), "binary")`` -> Estimate(..., method='Wilson')
    """
    check_estimand(estimand)
    t = len(means)
    if t == 0:
        return Estimate(NAN, NAN, NAN, "no valid episodes")
    n = np.ones(t) if counts is None else np.asarray(counts, dtype=float)
    p = float(np.mean(means))
    if estimand == "fixed_tasks":
        var = np.full(t, NAN) if variances is None else np.asarray(variances, dtype=float)
        return fixed_task_estimate(means, n, var, kind, confidence)
    if kind == "binary":
        return pass_rate_interval(means, n, confidence)
    if t < 2 or no_spread(means):
        why = "1 task" if t < 2 else "every task mean is the same"
        return fallback(p, n, kind, confidence, why)
    if kind == "proportion":
        low, high = t_interval(means, confidence)
        return Estimate(p, max(low, 0.0), min(high, 1.0), "t over task means")
    ci, method = bootstrap_interval((means,), np.mean, confidence, n_resamples, seed)
    return Estimate(
        p, ci.low, ci.high, method + (f"; approximate (T={t} < {SMALL_T})" if t < SMALL_T else "")
    )
