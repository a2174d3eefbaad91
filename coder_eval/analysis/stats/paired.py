"""Paired tests over per-task values of two variants: the one code path behind ``compare``.

Every verdict rests on one test, and the interval shown as the verdict's interval is that test
inverted (``inversion``), so it excludes "no difference" exactly when the test rejects:

- pass rates with one run per task: exact McNemar on the discordant tasks (which *is* the sign-flip
  test on d_i ∈ {−1, 0, 1}), with the sign-flip interval;
- pass rates with repeats, and scores: the exact sign-flip test on the differences d_i and its
  interval. When every d_i is the same (both variants pass everything, say) the inverted test has no
  width; the two arms' intervals combined (MOVER, assuming no correlation) widen it, on the side of
  "no difference" only when the test does not exclude it;
- amounts: ``amounts.amount_test`` (log ratios);
- ``estimand="fixed_tasks"``: a t test on the within-task variance, and the t interval that inverts it.

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

from coder_eval.analysis.stats.amounts import Basis, amount_test
from coder_eval.analysis.stats.estimate import Estimand, task_estimate, within_variances
from coder_eval.analysis.stats.intervals import N_RESAMPLES, NAN, SEED, FloatArray, Interval, no_spread
from coder_eval.analysis.stats.inversion import inverted, sign_flip_family
from coder_eval.analysis.stats.metrics import MetricKind

ALPHA = 0.05
POWER = 0.8
COVERED_FROM = 20
"""Pass rates and scores: the verdict's interval holds its coverage of a real effect from this many
paired tasks on (``benchmarks/ci_coverage.py``); below, it is labelled approximate."""


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
    if estimand == "fixed_tasks":
        return fixed_tasks_test(a, b, kind, confidence, p_t)
    if kind == "amount":
        return amount_result(a, b, confidence, n_resamples, seed, p_t)
    family = sign_flip_family(d, n_resamples, seed)
    p, low, high = inverted(family, 1 - confidence)
    method = f"inverted sign-flip test ({family.label})"
    if no_spread(d) and len(d) >= 2:
        (low, high), method = widened(
            Interval(low, high), float(d[0]), p < 1 - confidence, a, b, kind, confidence
        )
    if len(d) < COVERED_FROM:
        method += f"; approximate below {COVERED_FROM} tasks"
    one_run = kind == "binary" and bool(np.all(a.counts == 1) and np.all(b.counts == 1))
    test = f"sign-flip ({family.label})"
    if one_run:
        test = "exact McNemar" if family.exact else f"McNemar as a sign-flip test ({family.label})"
    return PairedResult(float(np.mean(d)), max(low, -1.0), min(high, 1.0), p, test, method, p_t)


NO_WIDTH = "the arms' own intervals are undefined, so it has no width"


def amount_result(a: Arm, b: Arm, confidence: float, n_resamples: int, seed: int, p_t: float) -> PairedResult:
    """``amounts.amount_test``, its interval given width where every task differs by the same amount:
    none at all (every task mean the same in both arms) is undefined; another is joined with the arms'
    intervals (``widened``)."""
    r = amount_test(a.means, b.means, confidence, n_resamples, seed)
    low, high, method = r.low, r.high, r.diff_method
    d = a.means - b.means
    if r.basis == "difference" and len(d) >= 2 and no_spread(d):
        if abs(float(d[0])) <= 1e-12 * max(1.0, float(np.max(np.abs(a.means)))):
            low, high, method = NAN, NAN, "undefined: every task mean is the same in both variants"
        else:
            (low, high), method = widened(
                Interval(low, high), float(d[0]), r.p_value < 1 - confidence, a, b, "amount", confidence
            )
    return PairedResult(
        r.diff, low, high, r.p_value, r.test, method, p_t,
        r.ratio, r.ratio_low, r.ratio_high, r.ratio_method, r.basis,
    )  # fmt: skip


def widened(
    inverted_ci: Interval, c: float, rejected: bool, a: Arm, b: Arm, kind: MetricKind, confidence: float
) -> tuple[Interval, str]:
    """Every task differs by ``c``: the inverted test accepts ``c`` alone (or, with too few tasks,
    anything). Joined with the MOVER interval, so it has width; when the test rejects 0, the MOVER
    part that would reach 0 is left out, so the interval still excludes 0."""
    mov = mover(a, b, kind, confidence, "population")
    if math.isnan(mov.low) or math.isnan(mov.high):
        return inverted_ci, f"inverted sign-flip test; every task differs by the same amount and {NO_WIDTH}"
    label = "inverted sign-flip test joined with the MOVER of the two arms' intervals (no spread in d)"
    low, high = min(inverted_ci.low, mov.low), max(inverted_ci.high, mov.high)
    if rejected and low <= 0 <= high:
        low, high = (c, max(c, mov.high)) if c > 0 else (min(c, mov.low), c)
        label += "; cut at the observed difference on the side of 0, which the test excludes"
    return Interval(low, high), label


def fixed_tasks_test(a: Arm, b: Arm, kind: MetricKind, confidence: float, p_t: float) -> PairedResult:
    """The fixed-task view: a t test on the variance between repeats (Σ(K − 1) df), with the t interval
    that inverts it; amounts with positive task means on the log scale (delta method)."""
    d = a.means - b.means
    df = max(float(np.sum(a.counts - 1) + np.sum(b.counts - 1)), 1.0)
    within = within_variances(a.variances, a.counts) + within_variances(b.variances, b.counts)
    label = f"t on within-task variance ({df:.0f} df)"
    diff = t_test(float(np.mean(d)), math.sqrt(float(np.sum(within))) / len(d), df, confidence)
    undefined = "fixed tasks: undefined (no run-to-run variation)"
    if kind != "amount" or not (np.all(a.means > 0) and np.all(b.means > 0)):
        low, high = (max(diff.low, -1.0), min(diff.high, 1.0)) if kind != "amount" else diff[1:3]
        method = undefined if math.isnan(diff.p_value) else f"fixed tasks: {label}, inverted"
        return PairedResult(float(np.mean(d)), low, high, diff.p_value, f"fixed tasks: {label}", method, p_t)
    var_r = (
        within_variances(a.variances, a.counts) / a.means**2
        + within_variances(b.variances, b.counts) / b.means**2
    )
    r = np.log(a.means) - np.log(b.means)
    log = t_test(float(np.mean(r)), math.sqrt(float(np.sum(var_r))) / len(r), df, confidence)
    method = f"fixed tasks: {label} on log ratios, inverted"
    return PairedResult(
        float(np.mean(d)), diff.low, diff.high, log.p_value, f"fixed tasks: {label} on log ratios",
        undefined if math.isnan(diff.p_value) else f"descriptive (not the verdict's): fixed tasks: {label}",
        p_t,
        float(np.exp(np.mean(r))), math.exp(log.low), math.exp(log.high),
        undefined if math.isnan(log.p_value) else method, "ratio",
    )  # fmt: skip


class TTest(NamedTuple):
    """A two-sided t test of 0 and its interval."""

    p_value: float
    low: float
    high: float


def t_test(mean_value: float, se: float, df: float, confidence: float) -> TTest:
    """``2 · t.sf(|mean| / se, df)`` and the matching interval; NaN when ``se`` is 0 (no variation)."""
    if not se > 0:
        return TTest(NAN, NAN, NAN)
    low, high = stats.t.interval(confidence, df, loc=mean_value, scale=se)
    return TTest(float(2 * stats.t.sf(abs(mean_value) / se, df)), float(low), float(high))


def mover(a: Arm, b: Arm, kind: MetricKind, confidence: float, estimand: Estimand) -> Interval:
    """Interval for mean(a) − mean(b) from each arm's interval (Newcombe's square-and-add), r = 0."""
    ea = task_estimate(a.means, kind, a.counts, a.variances, confidence, estimand=estimand)
    eb = task_estimate(b.means, kind, b.counts, b.variances, confidence, estimand=estimand)
    diff = ea.mean - eb.mean
    low = diff - math.hypot(ea.mean - ea.low, eb.high - eb.mean)
    high = diff + math.hypot(ea.high - ea.mean, eb.mean - eb.low)
    return Interval(low, high) if kind == "amount" else Interval(max(low, -1.0), min(high, 1.0))


def paired_mde_normal(d: FloatArray, power: float = POWER, alpha: float = ALPHA) -> float:
    """``(z_{α/2} + z_β) · sd(d) / √T``: the normal-approximation MDE (for reference only)."""
    if len(d) < 2:
        return NAN
    return float(z_sum(power, alpha) * np.std(d, ddof=1) / np.sqrt(len(d)))


def z_sum(power: float = POWER, alpha: float = ALPHA) -> float:
    """``z_{α/2} + z_β`` from the normal quantile function; 2.80 for α = 0.05, power 0.8."""
    return float(stats.norm.ppf(1 - alpha / 2) + stats.norm.ppf(power))
