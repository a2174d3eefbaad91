"""Anytime-valid comparisons: a betting confidence sequence for a bounded mean, and its decisions.

Observations x_1, x_2, ... lie in [-1, 1] (one per task: the candidate's task mean minus the
baseline's, or the capped log ratio of an amount's task means, ``capped_log_ratio``). For a
candidate mean m the capital K_t(m) = mean over a fixed grid of bets λ of prod_{i <= t}
(1 + λ (x_i - m)) is a non-negative martingale when the true mean is m, so by Ville's inequality it
ever reaches 1/alpha with chance at most alpha; the set of m it has not rejected is a 1 - alpha
confidence sequence, valid at every look.

Example::

    seq = confidence_sequence(np.array([1.0, 0.5, 1.0, 0.0, 1.0]))
    seq.low[-1], seq.high[-1]            # the interval after the fifth task
    decisions(seq, delta=0.2)[-1]        # 'better', 'worse', 'no_effect' or None (go on)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np

from coder_eval.errors import AnalysisError

if TYPE_CHECKING:  # intervals imports SciPy; the sequence itself needs only numpy
    from coder_eval.analysis.stats.intervals import FloatArray

ALPHA = 0.05
BET_FRACTIONS = np.linspace(0.2, 0.95, 8)
"""The bets, as fractions of the largest that keeps every factor positive (1 / (1 + |m|)), each
taken with both signs and averaged with equal weight. Large bets: a paired difference of pass rates
is worth betting on boldly (small ones only dilute the mixture; benchmarks/sequential_savings.py)."""
MEANS = np.linspace(-1.0, 1.0, 401)
"""The candidate means the sequence tests (steps of 0.005; 0 is one of them)."""
ZERO = int(np.argmin(np.abs(MEANS)))
Decision = Literal["better", "worse", "no_effect"]


@dataclass(frozen=True)
class ConfidenceSequence:
    """The interval after each observation (``low[t]``, ``high[t]``: after t + 1 of them) and the
    log capital against "no difference" (``log_e0``), at the threshold ``log(1 / level)``."""

    low: FloatArray
    high: FloatArray
    log_e0: FloatArray
    zero_rejected: np.ndarray
    level: float

    def __len__(self) -> int:
        return len(self.low)


def log_capital(x: FloatArray, means: FloatArray = MEANS) -> FloatArray:
    """log K_t(m): one row per look t, one column per candidate mean m (the mixture over the bets).

    Example: ``np.exp(log_capital(np.array([1.0]), np.array([0.0])))`` -> ``[[1.0]]`` (a bet of +λ
    and one of -λ on the same observation win and lose the same amount).
    """
    return _mixture(_log_paths(_observations(x), means))


def _observations(x: FloatArray) -> FloatArray:
    """``x`` as a float array, checked: one dimension, finite, in [-1, 1]."""
    x = np.asarray(x, dtype=float)
    if x.ndim != 1 or np.any(np.abs(x) > 1.0 + 1e-12) or not np.all(np.isfinite(x)):
        raise AnalysisError("a confidence sequence needs finite observations in [-1, 1]")
    return x


def _log_paths(x: FloatArray, means: FloatArray, before: FloatArray | None = None) -> FloatArray:
    """log prod (1 + λ (x_i - m)) for each look, candidate mean and bet: (looks, means, bets), of
    checked observations. ``before``: the paths' values at the look before ``x[0]`` (a later block of
    the same sequence), added first, so a block's paths equal those of the whole sequence to the last
    bit."""
    fractions = np.concatenate([BET_FRACTIONS, -BET_FRACTIONS])
    bets = fractions[None, :] / (1.0 + np.abs(means))[:, None]  # (means, bets)
    logs = np.log(1.0 + bets[None, :, :] * (x[:, None, None] - means[None, :, None]))
    if before is not None and len(logs):
        logs[0] += before
    for look in range(1, len(logs)):  # a running sum, look by look: cumsum's own additions, in
        np.add(logs[look - 1], logs[look], out=logs[look])  # its order, at a seventh of its cost
    return logs


def _mixture(paths: FloatArray) -> FloatArray:
    """log K_t(m) from the paths of every bet: their log mean, taken about the largest (every path is
    finite: each factor is at least 1 - 0.95), which is ``logsumexp(paths, axis=2) - log(bets)`` to
    within a few units of the last place, at less than half its cost (a forecast takes hundreds)."""
    top = paths.max(axis=2)
    return np.asarray(top + np.log(np.exp(paths - top[..., None]).mean(axis=2)), dtype=float)


def confidence_sequence(x: FloatArray, alpha: float = ALPHA, tests: int = 1) -> ConfidenceSequence:
    """The 1 - alpha confidence sequence for the mean of ``x`` (``tests`` decision metrics share
    alpha by e-Bonferroni: each rejects at capital ``tests / alpha``). A mean once rejected stays
    rejected (the running intersection), so the interval only narrows; it is the hull of the means
    not rejected, widened to the rejected grid point next to it on each side."""
    level = _level(alpha, tests)
    return _sequence(log_capital(np.asarray(x, dtype=float)), level, None)[0]


def _level(alpha: float, tests: int) -> float:
    if not 0 < alpha < 1 or tests < 1:
        raise AnalysisError(f"alpha must be in (0, 1) and tests at least 1, got {alpha}, {tests}")
    return alpha / tests


def _sequence(
    capital: FloatArray, level: float, rejected_before: np.ndarray | None
) -> tuple[ConfidenceSequence, np.ndarray]:
    """The sequence's looks for these rows of log capital, and the means rejected at its last look;
    ``rejected_before``: those rejected at the look before the first row (a later block of the same
    sequence)."""
    reached = capital >= np.log(1.0 / level)
    if rejected_before is not None:
        reached = np.concatenate([rejected_before[None], reached])
    rejected = np.maximum.accumulate(reached, axis=0)[0 if rejected_before is None else 1 :]
    kept = ~rejected
    least = np.argmin(capital, axis=1)  # every mean rejected: the least rejected one stands for them
    none = ~kept.any(axis=1)
    first = np.where(none, least, np.argmax(kept, axis=1))
    last = np.where(none, least, len(MEANS) - 1 - np.argmax(kept[:, ::-1], axis=1))
    low = MEANS[np.maximum(first - 1, 0)]
    high = MEANS[np.minimum(last + 1, len(MEANS) - 1)]
    return ConfidenceSequence(low, high, capital[:, ZERO], rejected[:, ZERO], level), rejected[-1]


def first_decision(
    x: FloatArray, delta: float, alpha: float = ALPHA, tests: int = 1, block: int = 8
) -> tuple[int, Decision] | None:
    """The first look that decides, and its decision (None when no look does): the first of
    ``decisions(confidence_sequence(x, alpha, tests), delta)`` that is not None, to the last bit,
    computed ``block`` looks at a time (doubling), so a sequence that decides early costs only the
    looks it took (a forecast simulates hundreds).

    Example: ``first_decision(np.ones(40), delta=0.2)`` -> ``(7, 'better')`` (the eighth task decides)
    """
    x, level = _observations(x), _level(alpha, tests)  # all of it, as the whole sequence would
    paths: FloatArray | None = None
    rejected: np.ndarray | None = None
    start = 0
    while start < len(x):
        paths = _log_paths(x[start : start + block], MEANS, None if paths is None else paths[-1])
        seq, rejected = _sequence(_mixture(paths), level, rejected)
        for look, decision in enumerate(decisions(seq, delta), start):
            if decision is not None:
                return look, decision
        start, block = start + block, block * 2
    return None


def decide(low: float, high: float, zero_rejected: bool, delta: float) -> Decision | None:
    """One look's decision: the interval excludes 0 (better, worse), lies inside (-delta, delta)
    (no effect as large as delta), or neither (None: go on)."""
    if zero_rejected and low >= 0:
        return "better"
    if zero_rejected and high <= 0:
        return "worse"
    if delta > 0 and -delta < low and high < delta:
        return "no_effect"
    return None


def decisions(seq: ConfidenceSequence, delta: float) -> list[Decision | None]:
    """The decision at every look (once made it stays: the interval only narrows)."""
    return [
        decide(float(lo), float(hi), bool(z), delta)
        for lo, hi, z in zip(seq.low, seq.high, seq.zero_rejected, strict=True)
    ]


RATIO_CAP = 4.0
"""Amounts: a task's ratio counts at most this far either way (×4 or ×1/4) in ``capped_log_ratio``."""


def capped_log_ratio(candidate: FloatArray, baseline: FloatArray, cap: float = RATIO_CAP) -> FloatArray:
    """The bounded transform for amounts (cost, tokens, time), oriented so +1 is better:
    log(baseline / candidate) / log(cap), clipped to [-1, 1]. Its mean is the mean log ratio over
    tasks in units of log(cap) whenever no task's ratio goes past the cap, so its sign is that of the
    geometric mean of the per-task ratios: a decision "better" means the candidate's typical ratio
    is below 1 (cheaper), in the sense ``compare`` calls cheaper. A task where one arm spent 0 and
    the other did not counts at the cap; where both spent 0, as a tie.

    Example: ``capped_log_ratio(np.array([1.0, 3.0, 16.0]), np.array([2.0, 3.0, 1.0]))``
    -> ``[0.5, 0.0, -1.0]``
    """
    a, b = np.asarray(candidate, dtype=float), np.asarray(baseline, dtype=float)
    if np.any(a < 0) or np.any(b < 0):
        raise AnalysisError("amounts must not be negative")
    if not cap > 1:
        raise AnalysisError(f"the ratio cap must be above 1 (got {cap})")
    with np.errstate(divide="ignore", invalid="ignore"):
        x = (np.log(b) - np.log(a)) / np.log(cap)
    x = np.where((a == 0) & (b == 0), 0.0, x)
    return np.asarray(np.clip(x, -1.0, 1.0), dtype=float)


def ratio_of(x: float, cap: float = RATIO_CAP) -> float:
    """The candidate / baseline ratio a value of ``capped_log_ratio``'s scale stands for (``cap ** -x``).

    Example: ``ratio_of(0.5)`` -> ``0.5`` (with the cap of 4: half the cost)
    """
    return float(cap ** (-x))
