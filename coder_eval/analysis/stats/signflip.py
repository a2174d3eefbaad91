"""The sign-flip test of paired differences, exact for any number of tasks on lattice data.

Under the null hypothesis each non-zero difference is as likely to be positive as negative, so the
null distribution of their sum is that of Σ ±|d_i| over all 2^n sign patterns. That distribution is
computed without listing the patterns:

- **lattice data** (pass rates and other task means that are multiples of 1/L, e.g. with K repeats):
  the differences that share a magnitude u contribute u · (2B − c) with B ~ Binomial(c, ½)
  (``scipy.stats.binom``), and the groups are convolved (``scipy.signal.fftconvolve``). Exact at any T;
  the work grows with the lattice span Σ|d_i|·L, not with 2^n.
- **other data** with at most ``EXACT_MAX_NONZERO`` non-zero differences: the 2^n sums are counted in
  two halves of 2^(n/2) each (meet in the middle), so n = 30 needs two arrays of 32,768 sums.
- beyond that: a Monte Carlo test over ``n_resamples`` random sign patterns (seeded).

Zero differences (up to rounding) are dropped first: flipping the sign of a 0 changes nothing.

Example::

    sign_flip(np.array([0.5, 1.0, 0.25])).p_value     # 0.25: 2 of 8 sign patterns are as extreme
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction
from typing import NamedTuple

import numpy as np
from scipy import signal, stats

from coder_eval.analysis.stats.intervals import N_RESAMPLES, NAN, SEED, FloatArray

EXACT_MAX_NONZERO = 30
"""Off the lattice, the exact test enumerates sums for at most this many non-zero differences."""
LATTICE_MAX_DENOMINATOR = 1_000
"""Task means are treated as multiples of 1/L for a common L up to this (pass rates with repeats)."""
LATTICE_MAX_SPAN = 2_000_000
"""Largest Σ|d_i|·L for the lattice convolution (its arrays have 2·span + 1 entries)."""
BATCH = 1_000
"""Random sign patterns evaluated at once by the Monte Carlo test (bounds its memory)."""


class SignFlip(NamedTuple):
    """A two-sided sign-flip p-value, whether it is exact, and the number of non-zero differences."""

    p_value: float
    exact: bool
    n_nonzero: int

    def label(self, n_resamples: int = N_RESAMPLES) -> str:
        """``"exact"`` or ``"9999 resamples"``, for a test column."""
        return "exact" if self.exact else f"{n_resamples} resamples"


def sign_flip(d: FloatArray, n_resamples: int = N_RESAMPLES, seed: int = SEED) -> SignFlip:
    """Two-sided sign-flip p-value for H0: each difference is symmetric about 0.

    Exact on lattice data at any size and on other data up to ``EXACT_MAX_NONZERO`` non-zero
    differences; Monte Carlo beyond. Example: ``sign_flip(np.array([1.0, 1, 1, 1, 1, 1])).p_value``
    -> ``0.03125``
    """
    d = np.asarray(d, dtype=float)
    if len(d) == 0:
        return SignFlip(NAN, True, 0)
    nonzero = d[np.abs(d) > 1e-12 * max(1.0, float(np.max(np.abs(d))))]  # rounding noise counts as 0
    n = len(nonzero)
    if n == 0:
        return SignFlip(1.0, True, 0)
    grid = lattice(np.abs(nonzero))
    if grid is not None:
        observed = int(np.sum(np.sign(nonzero).astype(np.int64) * grid.units))
        return SignFlip(lattice_p(grid.units, observed), True, n)
    if n <= EXACT_MAX_NONZERO:
        return SignFlip(enumerated_p(nonzero), True, n)
    return SignFlip(monte_carlo_p(nonzero, n_resamples, seed), False, n)


class Lattice(NamedTuple):
    """Magnitudes as integer ``units`` of a common ``1 / denominator``."""

    units: np.ndarray
    denominator: int


def lattice(magnitudes: FloatArray) -> Lattice | None:
    """Magnitudes as integer multiples of a common 1/L, or None when they are not on a small lattice.

    Example: ``lattice(np.array([1 / 3, 2 / 3, 1.0]))`` -> ``Lattice(units=array([1, 2, 3]), denominator=3)``
    """
    denominator = 1
    for value in np.unique(magnitudes):
        fraction = Fraction(float(value)).limit_denominator(LATTICE_MAX_DENOMINATOR)
        if abs(float(fraction) - value) > 1e-9 * max(1.0, value):
            return None
        denominator = math.lcm(denominator, fraction.denominator)
        if denominator > LATTICE_MAX_DENOMINATOR:
            return None
    units = np.rint(magnitudes * denominator).astype(np.int64)
    if np.any(units == 0) or units.sum() > LATTICE_MAX_SPAN:
        return None
    return Lattice(units, denominator)


def abs_tail(units: np.ndarray) -> FloatArray:
    """``tail[k]`` = P(|Σ ±u_i| ≥ k) for k = 0 … Σu_i under random signs.

    Example: ``abs_tail(np.array([1, 1]))`` -> ``array([1. , 0.5, 0.5])``
    """
    magnitudes, counts = np.unique(units, return_counts=True)
    return grouped_tail(tuple(zip(magnitudes.tolist(), counts.tolist(), strict=True)))


@functools.lru_cache(maxsize=65_536)
def grouped_tail(groups: tuple[tuple[int, int], ...]) -> FloatArray:
    """``abs_tail`` from (magnitude, count) groups, cached (the power simulation repeats them).

    Per distinct magnitude u with c tasks the sum is u · (2B − c), B ~ Binomial(c, ½); the groups
    are convolved.
    """
    pmf = np.ones(1)
    for unit, count in groups:
        if count == 0:
            continue
        group = np.zeros(2 * unit * count + 1)
        group[:: 2 * unit] = fair_binomial(count)
        pmf = signal.fftconvolve(pmf, group) if min(len(pmf), len(group)) > 64 else np.convolve(pmf, group)
    pmf = np.maximum(pmf, 0.0)
    span = (len(pmf) - 1) // 2
    by_size = pmf[span:].copy()
    by_size[1:] += pmf[:span][::-1]
    tail = np.cumsum(by_size[::-1])[::-1]
    tail.flags.writeable = False
    return np.asarray(tail, dtype=float)


@functools.lru_cache(maxsize=4096)
def fair_binomial(count: int) -> FloatArray:
    """``binom.pmf(0..count, count, ½)``, cached: the power simulation asks for the same counts often."""
    pmf = stats.binom.pmf(np.arange(count + 1), count, 0.5)
    pmf.flags.writeable = False
    return np.asarray(pmf, dtype=float)


def lattice_p(units: np.ndarray, observed: int) -> float:
    """P(|Σ ±u_i| ≥ |observed|) on the lattice (``abs_tail``)."""
    return min(float(abs_tail(units)[abs(observed)]), 1.0)


def half_sums(values: FloatArray) -> FloatArray:
    """All 2^len(values) signed sums Σ ±v_i."""
    sums = np.zeros(1)
    for value in values:
        sums = np.concatenate([sums + value, sums - value])
    return sums


def enumerated_p(nonzero: FloatArray) -> float:
    """Exact P(|Σ ±d_i| ≥ |Σ d_i|) by meeting in the middle: 2 · 2^(n/2) sums instead of 2^n."""
    magnitudes = np.abs(nonzero)
    tolerance = 1e-9 * float(magnitudes.sum())
    threshold = abs(float(nonzero.sum())) - tolerance
    if threshold <= 0:
        return 1.0
    half = len(magnitudes) // 2
    # both halves sorted: searching sorted queries walks the other half in order (several times faster)
    left, right = np.sort(half_sums(magnitudes[:half])), np.sort(half_sums(magnitudes[half:]))
    upper = len(right) - np.searchsorted(right, threshold - left, side="left")
    lower = np.searchsorted(right, -threshold - left, side="right")
    return min(float((upper + lower).sum()) / 2.0 ** len(magnitudes), 1.0)


def monte_carlo_p(nonzero: FloatArray, n_resamples: int, seed: int) -> float:
    """(1 + #{random patterns at least as extreme}) / (1 + n_resamples), seeded.

    The sign patterns are random bits and their sums come from ``random_subset_sums``:
    ``scipy.stats.permutation_test`` computes the same p-value but takes ~0.4 s at T = 1,000.
    """
    magnitudes = np.abs(nonzero)
    total = float(magnitudes.sum())
    threshold = abs(float(nonzero.sum())) - 1e-9 * total
    plus, _ = random_subset_sums(magnitudes, n_resamples, seed)
    extreme = int(np.count_nonzero(np.abs(2 * plus - total) >= threshold))
    return (1 + extreme) / (1 + n_resamples)


class SubsetSums(NamedTuple):
    """Per random sign pattern: the sum of the values it selects, and how many it selects."""

    sums: FloatArray
    sizes: FloatArray


def random_subset_sums(values: FloatArray, n_resamples: int, seed: int) -> SubsetSums:
    """``n_resamples`` seeded random subsets of ``values`` (each value in or out with probability ½):
    their sums and sizes.

    The subsets are random bytes (8 values each, in ``numpy.unpackbits`` order); each byte's sum is
    read from a table of its 256 possible sums, so the work is one lookup per byte instead of a
    product over every value. Example: ``random_subset_sums(np.ones(3), 4, 0).sizes`` -> 4 counts in 0..3
    """
    values = np.asarray(values, dtype=float)
    n = len(values)
    width = (n + 7) // 8
    padded = np.zeros(width * 8)
    padded[:n] = values
    byte_bits = np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1).astype(np.float64)
    tables = byte_bits @ padded.reshape(width, 8).T  # (256, width): the sum of each byte's values
    counts = byte_bits.sum(axis=1)
    rng = np.random.default_rng(seed)
    sums, sizes = [], []
    for start in range(0, n_resamples, BATCH):
        size = min(BATCH, n_resamples - start)
        bits = rng.integers(0, 256, size=(size, width), dtype=np.uint8)
        bits[:, -1] &= np.uint8((0xFF << (8 * width - n)) & 0xFF)  # bits past the last value select nothing
        sums.append(np.take_along_axis(tables.T, bits.T.astype(np.intp), axis=1).sum(axis=0))
        sizes.append(counts[bits].sum(axis=1))
    return SubsetSums(np.concatenate(sums), np.concatenate(sizes))
