"""Paired tests over per-task values of two variants: the one code path behind ``compare``.

Pass rates with one run per task: exact McNemar on the discordant tasks. Pass rates with repeats
and scores: the exact sign-flip test on the differences d_i. Both with a t interval over d_i, or,
when every d_i is the same (so t has no width), the two arms' intervals combined (MOVER, assuming
no correlation: conservative for paired data). Amounts: ``amounts.amount_test`` (log ratios).

Example::

    a, b = Arm.of(np.array([1.0, 0, 1, 1])), Arm.of(np.array([0.0, 0, 1, 0]))
    paired_test(a, b, "binary").p_value
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from scipy import stats

from coder_eval.analysis.amounts import Basis, amount_test
from coder_eval.analysis.estimate import Estimand, task_estimate, within_variances
from coder_eval.analysis.intervals import (
    N_RESAMPLES,
    NAN,
    SEED,
    FloatArray,
    Interval,
    no_spread,
    t_interval,
)
from coder_eval.analysis.metrics import MetricKind
from coder_eval.analysis.signflip import sign_flip

ALPHA = 0.05
POWER = 0.8


@dataclass(frozen=True)
class Arm:
    """One variant's per-task values on the paired tasks: means, runs behind each, variance between runs."""

    means: FloatArray
    counts: FloatArray
    variances: FloatArray

    @classmethod
    def of(
        cls, means: FloatArray, counts: FloatArray | None = None, variances: FloatArray | None = None
    ) -> Arm:
        """An arm from task means (one run each unless ``counts`` says otherwise)."""
        n = np.ones(len(means)) if counts is None else np.asarray(counts, dtype=float)
        var = np.full(len(means), NAN) if variances is None else np.asarray(variances, dtype=float)
        return cls(np.asarray(means, dtype=float), n, var)


class PairedResult(NamedTuple):
    """A paired difference (a − b) with its interval and test; amounts add a ratio (a / b)."""

    diff: float
    low: float
    high: float
    p_value: float
    test: str
    method: str
    p_value_t: float
    """Paired t-test p-value, a cross-check."""
    ratio: float = NAN
    ratio_low: float = NAN
    ratio_high: float = NAN
    ratio_method: str = ""
    basis: Basis = "difference"
    """What the verdict rests on: the difference, or (amounts with positive task means) the ratio."""


def mcnemar_exact(a_only: int, b_only: int) -> float:
    """Exact McNemar p-value: ``binomtest(a_only, a_only + b_only)``; 1.0 with no discordant pair.

    Example: ``mcnemar_exact(6, 0)`` -> ``0.03125``
    """
    n = a_only + b_only
    return 1.0 if n == 0 else float(stats.binomtest(a_only, n, 0.5).pvalue)


def paired_t_p(d: FloatArray) -> float:
    """Paired t-test p-value (``ttest_1samp(d, 0)``); 1.0 when every difference is 0."""
    if len(d) < 2:
        return NAN
    if no_spread(d):
        return 1.0 if abs(float(np.mean(d))) < 1e-12 else 0.0
    return float(stats.ttest_1samp(d, 0.0).pvalue)


def paired_test(
    a: Arm,
    b: Arm,
    kind: MetricKind,
    confidence: float = 0.95,
    n_resamples: int = N_RESAMPLES,
    seed: int = SEED,
    estimand: Estimand = "population",
) -> PairedResult:
    """The paired test of ``a`` vs ``b`` (same tasks, same order) for the metric kind.

    Example: ``paired_test(Arm.of(xa), Arm.of(xb), "amount").ratio``
    """
    d = a.means - b.means
    if len(d) == 0:
        return PairedResult(NAN, NAN, NAN, NAN, "none", "no task has valid episodes in both variants", NAN)
    p_t = paired_t_p(d)
    if kind == "amount":
        r = amount_test(a.means, b.means, confidence, n_resamples, seed)
        result = PairedResult(
            r.diff, r.low, r.high, r.p_value, r.test, r.diff_method, p_t,
            r.ratio, r.ratio_low, r.ratio_high, r.ratio_method, r.basis,
        )  # fmt: skip
        return fixed_amount(result, a, b, confidence) if estimand == "fixed_tasks" else result
    (low, high), method = difference_interval(a, b, kind, confidence, estimand)
    if kind == "binary" and np.all(a.counts == 1) and np.all(b.counts == 1):
        p = mcnemar_exact(int((d > 0).sum()), int((d < 0).sum()))
        return PairedResult(float(np.mean(d)), low, high, p, "exact McNemar", method, p_t)
    flip = sign_flip(d, n_resamples, seed)
    return PairedResult(
        float(np.mean(d)), low, high, flip.p_value, f"sign-flip ({flip.label(n_resamples)})", method, p_t
    )


def difference_interval(
    a: Arm, b: Arm, kind: MetricKind, confidence: float, estimand: Estimand
) -> tuple[Interval, str]:
    """t over d_i clipped to [−1, 1] (fixed tasks: t on within-task variances); MOVER when t has no width."""
    d = a.means - b.means
    if estimand == "fixed_tasks":
        var = float(np.sum(within_variances(a.variances, a.counts) + within_variances(b.variances, b.counts)))
        df = max(float(np.sum(a.counts - 1) + np.sum(b.counts - 1)), 1.0)
        low, high = stats.t.interval(confidence, df, loc=np.mean(d), scale=math.sqrt(var) / len(d))
        label = f"fixed tasks: t on within-task variance ({df:.0f} df)"
    else:
        low, high = t_interval(d, confidence)
        label = "t over paired differences"
    if not low < high:
        return mover(a, b, kind, confidence, estimand), "MOVER of the two arms' intervals (no spread in d)"
    return Interval(max(float(low), -1.0), min(float(high), 1.0)), label


def mover(a: Arm, b: Arm, kind: MetricKind, confidence: float, estimand: Estimand) -> Interval:
    """Interval for mean(a) − mean(b) from each arm's interval (Newcombe's square-and-add), r = 0."""
    ea = task_estimate(a.means, kind, a.counts, a.variances, confidence, estimand=estimand)
    eb = task_estimate(b.means, kind, b.counts, b.variances, confidence, estimand=estimand)
    diff = ea.mean - eb.mean
    low = diff - math.hypot(ea.mean - ea.low, eb.high - eb.mean)
    high = diff + math.hypot(ea.high - ea.mean, eb.mean - eb.low)
    return Interval(max(low, -1.0), min(high, 1.0))


def fixed_amount(result: PairedResult, a: Arm, b: Arm, confidence: float) -> PairedResult:
    """Amounts in the fixed-task view: both intervals from the variance between repeats only."""
    t = len(a.means)
    df = max(float(np.sum(a.counts - 1) + np.sum(b.counts - 1)), 1.0)
    var_d = float(np.sum(within_variances(a.variances, a.counts) + within_variances(b.variances, b.counts)))
    low, high = stats.t.interval(confidence, df, loc=result.diff, scale=math.sqrt(var_d) / t)
    method = f"fixed tasks: t on within-task variance ({df:.0f} df)"
    if result.basis == "ratio":  # delta method: Var(log m) ≈ Var(m) / m²
        var_r = float(
            np.sum(within_variances(a.variances, a.counts) / a.means**2)
            + np.sum(within_variances(b.variances, b.counts) / b.means**2)
        )
        r = float(np.mean(np.log(a.means) - np.log(b.means)))
        r_low, r_high = stats.t.interval(confidence, df, loc=r, scale=math.sqrt(var_r) / t)
        result = result._replace(
            ratio_low=float(np.exp(r_low)),
            ratio_high=float(np.exp(r_high)),
            ratio_method=method + ", log scale",
        )
    if not low < high:
        return result._replace(low=NAN, high=NAN, method="fixed tasks: undefined (no run-to-run variation)")
    return result._replace(low=float(low), high=float(high), method=method)


def paired_mde_normal(d: FloatArray, power: float = POWER, alpha: float = ALPHA) -> float:
    """``(z_{α/2} + z_β) · sd(d) / √T``: the normal-approximation MDE (for reference only)."""
    if len(d) < 2:
        return NAN
    return float(z_sum(power, alpha) * np.std(d, ddof=1) / np.sqrt(len(d)))


def z_sum(power: float = POWER, alpha: float = ALPHA) -> float:
    """``z_{α/2} + z_β`` from the normal quantile function; 2.80 for α = 0.05, power 0.8."""
    return float(stats.norm.ppf(1 - alpha / 2) + stats.norm.ppf(power))
