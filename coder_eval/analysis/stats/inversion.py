"""The interval of the sign-flip test: every mean difference δ that the test of "the differences are
symmetric about δ" does not reject, so that the interval excludes 0 exactly when the test rejects 0.

The test of δ shifts the differences to x_i = d_i − δ and compares |Σ x_i| with Σ ±x_i over all
sign patterns. Flipping the signs of a set S of the x_i lowers the sum by 2 Σ_S x_i, so for δ below
the mean d̄ the pattern is at least as extreme as the data exactly when the mean of d over S is at
most δ (or the mean over its complement is; Hartigan 1969). So the two-sided p-value below d̄ is

    p(δ) = 2 · (1 + #{non-empty S : mean_S(d) ≤ δ}) / 2^n,

a step function that grows with δ, and the interval's ends are *subset means* of the data. Which
subsets are counted decides how the test is computed, exactly as in ``signflip``:

- **lattice data** (pass rates: task means that are multiples of 1/L): the number of subsets of each
  size k and sum s is counted by dynamic programming over the tasks (``LATTICE_MAX_WORK`` bounds its
  table); each (k, s) is one subset mean s / (kL) with its share of the 2^n patterns. Exact;
- **other data**, up to ``DIRECT_MAX`` tasks: every subset mean is listed. Exact;
- up to ``EXACT_MAX_NONZERO`` tasks: p(δ) by the two-half enumeration of ``signflip.enumerated_p`` on
  the shifted data, and the ends by bisection of that monotone step function, to 1e-7 of the data's
  scale (every end is a δ the test accepts, so the interval and the test still agree exactly);
- beyond: ``n_resamples`` seeded random sign patterns, each giving two subset means (its flipped set
  and the complement): p(δ) = (1 + #{patterns at least as extreme}) / (1 + n_resamples), the Monte
  Carlo test, and the interval is its inversion on the same patterns.

With too few tasks for the test ever to reject at the level asked, the interval is unbounded
(``±inf``); callers clip it to the metric's range. When every difference is the same the interval is
the single point d̄: the test rejects every other δ (callers fall back to another interval there).

Example::

    family = sign_flip_family(np.array([1.0, 1, 1, 1, 1, 1, 0, 1]))
    family.p_value(0.0), family.interval(0.05)     # 0.0156..., Interval(low=0.5, high=1.0)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple, Protocol

import numpy as np

from coder_eval.analysis.stats.intervals import N_RESAMPLES, SEED, FloatArray, Interval
from coder_eval.analysis.stats.signflip import EXACT_MAX_NONZERO, enumerated_p, lattice, random_subset_sums

DIRECT_MAX = 16
"""Off the lattice, every one of the 2^n subset means is listed up to this many tasks."""
LATTICE_MAX_WORK = 30_000_000
"""Largest tasks × table cells of the lattice count (beyond it: Monte Carlo)."""
BISECTION_STEPS = 60
ENDS_PRECISION = 1e-7
"""Bisected ends are found to within this share of the data's scale (far below what is printed)."""
INF = math.inf


class SignFlipFamily(Protocol):
    """The sign-flip test of every δ: its p-value, and the interval of the δ it does not reject."""

    @property
    def centre(self) -> float:
        """The mean difference (p = 1 there)."""

    @property
    def label(self) -> str:
        """``exact`` or ``9999 resamples``, as in the test column."""

    @property
    def exact(self) -> bool:
        """False for the Monte Carlo test."""

    def p_value(self, delta: float = 0.0) -> float: ...

    def interval(self, alpha: float = 0.05) -> Interval: ...


def tolerance(d: FloatArray) -> float:
    """Rounding noise of means of ``d`` (1/3 + 1/3 − 2/3 is not 0 in floating point)."""
    return 1e-9 * max(1.0, float(np.max(np.abs(d)))) if len(d) else 0.0


@dataclass(frozen=True)
class SubsetMeans:
    """A family from a finite list of subset means, each with its share of the sign patterns.

    ``base`` counts at every δ (the pattern of the data itself, and subsets that are empty).
    """

    centre: float
    means: FloatArray
    """Sorted ascending."""
    weights: FloatArray
    base: float
    tol: float
    label: str
    exact: bool

    def p_value(self, delta: float = 0.0) -> float:
        """Two-sided p-value of the test that the differences are symmetric about ``delta``."""
        if abs(delta - self.centre) <= self.tol:
            return 1.0
        return min(1.0, self.base + self.tail_weight(delta))

    def tail_weight(self, delta: float) -> float:
        """Weight of the subset means on the far side of ``delta`` from the centre (``delta`` included)."""
        if delta < self.centre:
            upto = int(np.searchsorted(self.means, delta + self.tol, side="right"))
            return float(np.sum(self.weights[:upto]))
        start = int(np.searchsorted(self.means, delta - self.tol, side="left"))
        return float(np.sum(self.weights[start:]))

    def interval(self, alpha: float = 0.05) -> Interval:
        """The δ the test does not reject at level ``alpha``: from the first subset mean whose
        p-value reaches ``alpha`` to the last (unbounded when no δ is rejected)."""
        if self.base >= alpha:
            return Interval(-INF, INF)
        from_below = self.base + np.cumsum(self.weights)
        from_above = self.base + np.cumsum(self.weights[::-1])[::-1]
        lows = np.flatnonzero((self.means < self.centre - self.tol) & (from_below >= alpha))
        highs = np.flatnonzero((self.means > self.centre + self.tol) & (from_above >= alpha))
        low = float(self.means[lows[0]]) if len(lows) else self.centre
        high = float(self.means[highs[-1]]) if len(highs) else self.centre
        return Interval(low, high)


@dataclass(frozen=True)
class BisectedFamily:
    """Exact enumeration of the shifted data for each δ (``signflip.enumerated_p``), ends by bisection."""

    d: FloatArray
    centre: float
    tol: float
    label: str = "exact"
    exact: bool = True

    def p_value(self, delta: float = 0.0) -> float:
        """Two-sided p-value of the test that the differences are symmetric about ``delta``."""
        if abs(delta - self.centre) <= self.tol:
            return 1.0
        return enumerated_p(self.d - delta)

    def interval(self, alpha: float = 0.05) -> Interval:
        """Bisection of the monotone p-value on each side of the centre; every end is accepted."""
        span = float(np.ptp(self.d)) + self.tol
        low = self.end(float(np.min(self.d)) - span, alpha)
        high = self.end(float(np.max(self.d)) + span, alpha)
        return Interval(low, high)

    def end(self, outside: float, alpha: float) -> float:
        """The accepted δ nearest ``outside`` between it and the centre (±inf when even it is accepted)."""
        if self.p_value(outside) >= alpha:
            return -INF if outside < self.centre else INF
        rejected, accepted = outside, self.centre
        precision = ENDS_PRECISION * max(1.0, float(np.max(np.abs(self.d))))
        for _ in range(BISECTION_STEPS):
            if abs(accepted - rejected) <= precision:
                break
            middle = (rejected + accepted) / 2
            if self.p_value(middle) >= alpha:
                accepted = middle
            else:
                rejected = middle
        return accepted


def sign_flip_family(d: FloatArray, n_resamples: int = N_RESAMPLES, seed: int = SEED) -> SignFlipFamily:
    """The test of every δ for the differences ``d``, computed as ``signflip.sign_flip`` computes it.

    Example: ``sign_flip_family(np.array([0.5, 1.0, 0.25])).p_value(0.0)`` -> ``0.25``
    """
    d = np.asarray(d, dtype=float)
    if len(d) == 0:
        raise ValueError("sign_flip_family needs at least one difference")
    tol = tolerance(d)
    units = lattice_units(d, tol)
    if units is not None:
        return lattice_family(d, *units, tol)
    if len(d) <= DIRECT_MAX:
        return listed_family(d, tol)
    if len(d) <= EXACT_MAX_NONZERO:
        return BisectedFamily(d, float(np.mean(d)), tol)
    return monte_carlo_family(d, n_resamples, seed, tol)


def lattice_units(d: FloatArray, tol: float) -> tuple[np.ndarray, int] | None:
    """Signed integer units of a common 1/L (zeros included), when small enough to count exactly."""
    nonzero = d[np.abs(d) > tol * 1e-3]
    if len(nonzero) == 0:
        return np.zeros(len(d), dtype=np.int64), 1
    grid = lattice(np.abs(nonzero))
    if grid is None:
        return None
    units = np.rint(d * grid.denominator).astype(np.int64)
    span = int(np.abs(units).sum()) + 1
    if len(d) * (len(d) + 1) * span > LATTICE_MAX_WORK:
        return None
    return units, grid.denominator


def lattice_family(d: FloatArray, units: np.ndarray, denominator: int, tol: float) -> SubsetMeans:
    """Count the subsets of every size k and unit sum s (each task in or out with probability ½)."""
    n = len(units)
    offset = int(-units[units < 0].sum())
    table = np.zeros((n + 1, offset + int(units[units > 0].sum()) + 1))
    table[0, offset] = 1.0
    for u in units.tolist():
        moved = np.zeros_like(table)
        if u >= 0:
            moved[1:, u:] = table[:-1, : table.shape[1] - u]
        else:
            moved[1:, :u] = table[:-1, -u:]
        table = 0.5 * (table + moved)
    sizes, sums = np.nonzero(table[1:])
    sizes += 1
    means = (sums - offset) / (sizes * denominator)
    weights = 2 * table[sizes, sums]
    distinct, index = np.unique(means, return_inverse=True)
    summed = np.asarray(np.bincount(index, weights=weights), dtype=float)
    return SubsetMeans(float(np.mean(d)), distinct, summed, 2 * float(table[0, offset]), tol, "exact", True)


def listed_family(d: FloatArray, tol: float) -> SubsetMeans:
    """Every non-empty subset mean of ``d`` (2^n − 1 of them), each worth 2 / 2^n."""
    sums, sizes = np.zeros(1), np.zeros(1)
    for value in d:
        sums, sizes = np.concatenate([sums, sums + value]), np.concatenate([sizes, sizes + 1])
    means = np.sort(sums[1:] / sizes[1:])
    share = 2.0 / 2.0 ** len(d)
    return SubsetMeans(float(np.mean(d)), means, np.full(len(means), share), share, tol, "exact", True)


def monte_carlo_family(d: FloatArray, n_resamples: int, seed: int, tol: float) -> SubsetMeans:
    """Seeded random sign patterns; each pattern's flipped set and its complement give two subset means."""
    n, total = len(d), float(np.sum(d))
    s, k = random_subset_sums(d, n_resamples, seed)
    both_s, both_k = np.concatenate([s, total - s]), np.concatenate([k, n - k])
    empty = both_k == 0
    share = 1.0 / (1 + n_resamples)
    means = np.sort(both_s[~empty] / both_k[~empty])
    return SubsetMeans(
        float(np.mean(d)), means, np.full(len(means), share), share * (1 + int(empty.sum())), tol,
        f"{n_resamples} resamples", False,
    )  # fmt: skip


class TestInterval(NamedTuple):
    """A test of ``null`` and the interval that inverts it: the interval excludes ``null`` exactly
    when ``p_value < alpha``."""

    p_value: float
    low: float
    high: float


def inverted(family: SignFlipFamily, alpha: float = 0.05, null: float = 0.0) -> TestInterval:
    """The p-value at ``null`` and the interval at ``alpha``, kept consistent at the rounding level
    (an accepted null is always inside the interval; a rejected one is outside by construction).

    Example: ``inverted(sign_flip_family(d), 0.05)`` -> ``TestInterval(p_value=0.0156, low=0.5, high=1.0)``
    """
    p = family.p_value(null)
    low, high = family.interval(alpha)
    if p >= alpha:
        low, high = min(low, null), max(high, null)
    return TestInterval(p, low, high)
