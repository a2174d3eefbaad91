"""The power of ``compare``'s verdict for a planned number of tasks, from a pilot's differences.

The model of a planned run: the pilot's per-task differences on the scale the test uses (d_i for
pass rates and scores, log ratios for amounts), made symmetric about 0 so that effect 0 is a true
null, then moved to a mean effect δ:

- differences on a coarse lattice (pass rates: multiples of 1/K) are reweighted over the lattice points
  (exponential tilting), with one pseudo-task spread evenly over the possible values, so that a
  pilot in which no task differs still plans;
- other differences are shifted by δ.

``n_sims`` planned runs of T tasks are drawn (seeded; the same draws for every δ) and each gets the
verdict ``compare`` would give: the exact test (McNemar, sign-flip) at α, whose inverted interval is
the verdict's interval. Power is the share called; the MDE the smallest δ with power ≥ the target. Where
simulating would be slow and the test's discreteness no longer matters, an approximation is used:
continuous differences from ``CONTINUOUS_SIM_MAX`` tasks on (noncentral t, statsmodels), lattice
ones above ``LATTICE_SIM_MAX`` (the sign-flip test's normal form).

Example::

    model = DifferenceModel.from_pilot(np.array([0.0, 1 / 3, 0.0, -1 / 3, 2 / 3]), bound=1.0)
    model.power(0.3, n_tasks=20), model.mde(n_tasks=20)
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field

import numpy as np
from scipy import optimize, stats
from statsmodels.stats.power import TTestPower

from coder_eval.analysis.stats.intervals import NAN, SEED, FloatArray
from coder_eval.analysis.stats.signflip import grouped_tail, lattice

N_SIMS = 1000
"""Simulated planned runs per power estimate (Monte Carlo SE of a power of 0.8: 1.3 points)."""
CONTINUOUS_SIM_MAX = 10
"""Continuous differences: simulate (exact enumeration of sign patterns) below this many tasks."""
LATTICE_SIM_MAX = 60
"""Lattice differences: simulate (exact lattice test) up to this many tasks."""
LATTICE_MAX_DENOMINATOR = 12
"""Differences on a finer lattice than 1/12 (weighted scores, say) are modelled as continuous."""
BISECTION_STEPS = 10


@dataclass
class DifferenceModel:
    """A symmetric distribution of per-task differences built from a pilot, movable to any mean effect."""

    values: FloatArray
    """Support (test scale); lattice points when ``denominator`` is set."""
    weights: FloatArray
    """Probabilities at effect 0 (symmetric)."""
    denominator: int | None
    """L when the values are multiples of 1/L."""
    min_tasks: int = 0
    """Below this many tasks the verdict is never called (amounts)."""
    seed: int = SEED
    n_sims: int = N_SIMS
    _critical: dict[tuple[int, ...], float] = field(default_factory=dict, repr=False)
    _subsets: dict[int, tuple[FloatArray, FloatArray]] = field(default_factory=dict, repr=False)

    @classmethod
    def from_pilot(
        cls,
        d: FloatArray,
        bound: float | None = None,
        min_tasks: int = 0,
        seed: int = SEED,
        n_sims: int = N_SIMS,
    ) -> DifferenceModel:
        """From pilot differences; ``bound`` (1.0 for rates) allows the lattice model when |d| ≤ bound."""
        d = np.asarray(d, dtype=float)
        grid = lattice(np.abs(d[d != 0])) if bound is not None and np.any(d != 0) else None
        coarse = grid is not None and grid.denominator <= LATTICE_MAX_DENOMINATOR
        if bound is not None and (coarse or not np.any(d != 0)):
            denominator = grid.denominator if grid else 1
            span = round(bound * denominator)
            points = np.arange(-span, span + 1)
            observed = np.rint(d * denominator).astype(int) + span
            counts = np.bincount(observed, minlength=len(points)).astype(float)
            counts += 1.0 / len(points)  # one pseudo-task spread over every value
            return cls(points / denominator, counts / counts.sum(), denominator, min_tasks, seed, n_sims)
        values = d - np.mean(d) if len(d) else np.zeros(1)
        return cls(values, np.full(len(values), 1 / len(values)), None, min_tasks, seed, n_sims)

    @property
    def sd(self) -> float:
        """Standard deviation of a difference (as in the pilot)."""
        centre = float(np.sum(self.weights * self.values))
        return float(np.sqrt(np.sum(self.weights * (self.values - centre) ** 2)))

    def moved(self, effect: float) -> tuple[FloatArray, FloatArray]:
        """(values, weights) with mean ``effect``: tilted on a lattice, shifted otherwise."""
        if self.denominator is None:
            return self.values + effect, self.weights
        top = float(self.values.max())
        effect = float(np.clip(effect, -0.999 * top, 0.999 * top))
        rate = optimize.brentq(lambda r: tilted_mean(self, r) - effect, -2000.0, 2000.0) if effect else 0.0
        return self.values, tilted(self, rate)

    def power(self, effect: float, n_tasks: int, alpha: float = 0.05) -> float:
        """Share of planned runs of ``n_tasks`` tasks in which the verdict is called at ``effect``."""
        if n_tasks < max(self.min_tasks, 2):
            return 0.0
        if self.denominator is None and n_tasks >= CONTINUOUS_SIM_MAX:
            if self.sd == 0:
                return 1.0 if effect else alpha
            return float(TTestPower().power(effect_size=abs(effect) / self.sd, nobs=n_tasks, alpha=alpha))
        if self.denominator is not None and n_tasks > LATTICE_SIM_MAX:
            return normal_sign_flip_power(abs(effect), self.sd, n_tasks, alpha, 1 / self.denominator)
        if self.denominator is None:
            return float(np.mean(self.shifted_rejects(effect, n_tasks, alpha)))
        return float(np.mean(self.lattice_rejects(self.draw(effect, n_tasks), alpha)))

    def draw(self, effect: float, n_tasks: int) -> FloatArray:
        """``n_sims`` × ``n_tasks`` differences at ``effect`` (the same uniforms for every effect)."""
        values, weights = self.moved(effect)
        uniforms = np.random.default_rng([self.seed, n_tasks]).random((self.n_sims, n_tasks))
        index = np.minimum(np.searchsorted(np.cumsum(weights), uniforms), len(values) - 1)
        return np.asarray(values[index], dtype=float)

    def shifted_rejects(self, effect: float, n_tasks: int, alpha: float) -> np.ndarray:
        """The exact sign-flip test of each simulated run of shifted (continuous) differences.

        A run's sum over a subset S of its tasks at effect δ is Σ_S v + δ·|S| for the run's draws v at
        effect 0, so the subset sums are computed once per number of tasks; a run at mean > 0 is as
        extreme as its sign patterns that flip a subset with sum ≤ 0 (``inversion``), so
        p = 2 · (1 + #{S ≠ ∅ : Σ_S ≤ 0}) / 2^n.
        """
        sums, sizes = self.subset_sums(n_tasks)
        at_effect = sums + effect * sizes
        total = at_effect[:, -1]
        tolerance = 1e-9 * max(1.0, float(np.max(np.abs(self.values))) + abs(effect)) * n_tasks
        below = np.count_nonzero(at_effect <= tolerance, axis=1)
        above = np.count_nonzero(at_effect >= -tolerance, axis=1)
        p = 2.0 * (1 + np.where(total > 0, below, above)) / 2.0**n_tasks
        return np.asarray((p < alpha) & (np.abs(total) > tolerance))

    def subset_sums(self, n_tasks: int) -> tuple[FloatArray, FloatArray]:
        """Per simulated run at effect 0, the sum over every non-empty subset of its tasks (the whole
        set last), and the subsets' sizes; cached per number of tasks."""
        if n_tasks not in self._subsets:
            indicator = subset_indicator(n_tasks)
            draws = self.draw(0.0, n_tasks)
            self._subsets[n_tasks] = (np.einsum("ij,jk->ik", draws, indicator), indicator.sum(axis=0))
        return self._subsets[n_tasks]

    def lattice_rejects(self, draws: FloatArray, alpha: float) -> np.ndarray:
        """Exact sign-flip on lattice draws; the critical |sum| is cached per multiset of magnitudes."""
        assert self.denominator is not None
        units = np.rint(draws * self.denominator).astype(np.int64)
        magnitudes = np.abs(units)
        top = int(magnitudes.max()) if magnitudes.size else 0
        counts = np.stack([(magnitudes == m).sum(axis=1) for m in range(1, top + 1)], axis=1)
        critical = np.array([self.critical(key, alpha) for key in map(tuple, counts.tolist())])
        return np.asarray(np.abs(units.sum(axis=1)) >= critical)

    def critical(self, counts: tuple[int, ...], alpha: float) -> float:
        """Smallest |sum| whose exact two-sided sign-flip p-value is below α (inf if none)."""
        key = (*counts, round(alpha * 1e9))
        if key not in self._critical:
            below = np.flatnonzero(grouped_tail(tuple(enumerate(counts, start=1))) < alpha)
            self._critical[key] = float(below[0]) if len(below) else math.inf
        return self._critical[key]

    def mde(self, n_tasks: int, power: float = 0.8, alpha: float = 0.05) -> float:
        """Smallest effect whose verdict is called with probability ≥ ``power``; NaN when none is, and
        when the differences have no spread (shifted, they would be called at any effect)."""
        if self.denominator is None and self.sd == 0:
            return NAN
        top = float(np.max(np.abs(self.values))) if self.denominator else 20 * self.sd
        high = 0.999 * top if self.denominator else top
        if self.power(high, n_tasks, alpha) < power:
            return NAN
        low = 0.0
        for _ in range(BISECTION_STEPS):
            middle = (low + high) / 2
            low, high = (middle, high) if self.power(middle, n_tasks, alpha) < power else (low, middle)
        return high


def tilted(model: DifferenceModel, rate: float) -> FloatArray:
    """The model's weights reweighted by exp(rate · value), normalised (computed without overflow)."""
    exponent = rate * model.values
    w = model.weights * np.exp(exponent - exponent.max())
    return np.asarray(w / w.sum(), dtype=float)


def tilted_mean(model: DifferenceModel, rate: float) -> float:
    """Mean of the tilted distribution."""
    return float(np.sum(tilted(model, rate) * model.values))


@functools.lru_cache(maxsize=16)
def subset_indicator(n: int) -> FloatArray:
    """n × (2^n − 1): column j marks the tasks of the non-empty subset j (binary j + 1; the whole set last).

    Example: ``subset_indicator(2)`` -> ``array([[1., 0., 1.], [0., 1., 1.]])``
    """
    codes = np.arange(1, 2**n)
    indicator = ((codes[None, :] >> np.arange(n)[:, None]) & 1).astype(np.float64)
    indicator.flags.writeable = False
    return indicator


def normal_sign_flip_power(effect: float, sd: float, n_tasks: int, alpha: float, step: float = 0.0) -> float:
    """Power of the large-sample sign-flip test, which rejects when |Σd| ≥ z √Σd² (+ ``step``, the
    continuity correction of differences on a lattice of that step): under effect δ, Σd ~ N(Tδ, Tσ²)
    and Σd² ≈ T(σ² + δ²)."""
    if sd == 0:
        return 1.0 if effect else alpha
    z = stats.norm.ppf(1 - alpha / 2)
    threshold = z * math.sqrt(n_tasks * (sd**2 + effect**2)) + step
    return float(stats.norm.cdf((n_tasks * effect - threshold) / (math.sqrt(n_tasks) * sd)))
