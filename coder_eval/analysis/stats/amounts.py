"""Paired comparison of amounts (tokens, cost, duration, turns, tool calls): ratios that hold their level.

Task scales differ by orders of magnitude, so the primary comparison of two variants is on the
**log ratio** of each task's means, r_i = log(mean_a,i / mean_b,i), where the task's scale cancels:

- test: the exact sign-flip test on the r_i (``signflip.sign_flip``);
- interval: that test inverted (``inversion``), exponentiated: an interval for the geometric mean of
  the per-task ratios (``ratio``), the typical factor by which a differs from b on a task. It
  excludes 1 exactly when the test rejects, so the ratio and its interval always tell the verdict.

When some task mean is 0 or negative (a ratio is undefined), or every task has the same ratio (its
interval would have no width), the verdict rests on the differences d_i = mean_a,i − mean_b,i
instead: the same test and its inverted interval on d_i.

When the verdict rests on the ratio, the difference of means is reported too, with a t interval over
tasks labelled *descriptive*: it is not the verdict's interval, and with heavy-tailed task scales it
is approximate. No verdict is called with fewer than ``MIN_TASKS`` paired tasks.

Example::

    amount_test(np.array([2.0, 4.0, 3.0]), np.array([1.0, 2.0, 1.5])).ratio    # 2.0
"""

from __future__ import annotations

from typing import Literal, NamedTuple

import numpy as np

from coder_eval.analysis.stats.intervals import (
    N_RESAMPLES,
    NAN,
    SEED,
    FloatArray,
    Interval,
    no_spread,
    t_interval,
)
from coder_eval.analysis.stats.inversion import inverted, sign_flip_family
from coder_eval.analysis.stats.signflip import sign_flip

MIN_TASKS = 6
"""No verdict on an amount with fewer paired tasks. Below 6 no exact sign-flip test reaches p < 0.05
(2 / 2^5 = 0.0625); ``benchmarks/ci_coverage.py`` shows the verdict's type-I error and the ratio
interval's coverage on target from 6 tasks on, so the floor is not set higher."""

Basis = Literal["ratio", "difference"]


class AmountResult(NamedTuple):
    """An amount comparison: the difference with its interval, the ratio with its, and the test."""

    diff: float
    low: float
    high: float
    diff_method: str
    ratio: float
    ratio_low: float
    ratio_high: float
    ratio_method: str
    p_value: float
    test: str
    basis: Basis
    """What the verdict rests on: the ratio (all task means positive) or the difference."""


def amount_test(
    xa: FloatArray,
    xb: FloatArray,
    confidence: float = 0.95,
    n_resamples: int = N_RESAMPLES,
    seed: int = SEED,
) -> AmountResult:
    """The sign-flip test on log ratios and its inverted interval when every task mean is positive;
    else the same on the differences.

    Example: ``amount_test(cost_a, cost_b).p_value``
    """
    d = xa - xb
    positive = len(d) >= 2 and bool(np.all(xa > 0) and np.all(xb > 0))
    r = np.log(xa) - np.log(xb) if positive else np.array([])
    if positive and not no_spread(r):
        return on_ratios(d, r, confidence, n_resamples, seed)
    why = "every task has the same ratio" if positive else undefined_ratio(xa, xb)
    ratio = float(np.exp(np.mean(r))) if positive else NAN
    if len(d) < 2:
        p = sign_flip(d, n_resamples, seed).p_value if len(d) else NAN
        return AmountResult(
            mean(d), NAN, NAN, "undefined with fewer than 2 tasks", ratio, NAN, NAN, f"undefined: {why}", p,
            "sign-flip on differences (exact)", "difference",
        )  # fmt: skip
    family = sign_flip_family(d, n_resamples, seed)
    p, low, high = inverted(family, 1 - confidence)
    method = f"inverted sign-flip test on differences ({family.label})"
    if no_spread(d):
        method += "; every task differs by the same amount, so the test accepts that amount alone"
    return AmountResult(
        mean(d), low, high, method, ratio, NAN, NAN, f"undefined: {why}", p,
        f"sign-flip on differences ({family.label})", "difference",
    )  # fmt: skip


def on_ratios(d: FloatArray, r: FloatArray, confidence: float, n_resamples: int, seed: int) -> AmountResult:
    """The verdict on the log ratios; the difference of means beside it, descriptive."""
    family = sign_flip_family(r, n_resamples, seed)
    p, low, high = inverted(family, 1 - confidence)
    diff_ci, diff_method = descriptive_interval(d, confidence)
    return AmountResult(
        mean(d), *diff_ci, diff_method, float(np.exp(np.mean(r))), float(np.exp(low)), float(np.exp(high)),
        f"inverted sign-flip test on log ratios ({family.label})", p,
        f"sign-flip on log ratios ({family.label})", "ratio",
    )  # fmt: skip


def undefined_ratio(xa: FloatArray, xb: FloatArray) -> str:
    """Why the per-task ratios are undefined."""
    if len(xa) < 2:
        return "fewer than 2 tasks"
    if np.any(xa < 0) or np.any(xb < 0):
        return "a task mean is negative, so ratios are undefined"
    return "a task mean is 0, so ratios are undefined"


def descriptive_interval(d: FloatArray, confidence: float = 0.95) -> tuple[Interval, str]:
    """t interval of mean(d) over tasks, labelled descriptive: the verdict rests on the ratio.

    With heavy-tailed task scales no interval for a difference of means holds its coverage on the
    numbers of tasks evals have (``benchmarks/ci_coverage.py`` prints it), which is why the verdict
    rests on the ratio. Example: ``descriptive_interval(np.array([1.0, 3.0, 2.0, 9.0]))``
    """
    if len(d) < 2:
        return Interval(NAN, NAN), "undefined with fewer than 2 tasks"
    low, high = t_interval(d, confidence)
    if not low < high:
        return Interval(NAN, NAN), "undefined: every task difference is the same"
    return Interval(low, high), DESCRIPTIVE


DESCRIPTIVE = "descriptive (not the verdict's): t over paired differences, approximate (heavy-tailed amounts)"


def mean(x: FloatArray) -> float:
    """Mean, NaN when empty (without a warning)."""
    return float(np.mean(x)) if len(x) else NAN
