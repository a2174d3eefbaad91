"""Planning from a pilot: the power of ``compare``'s verdict, the minimum detectable effect, tasks needed.

Effects are on the scale the verdict uses: a difference for pass rates and scores (0.1 = ten
points), a ratio for amounts whose task means are all positive (1.2 = 20 % more, either way).

With the pilot's own number of repeats K, power comes from simulating the verdict on planned runs
drawn from the pilot's differences (``power_model``). For another K the differences are taken as
normal with Var(d) = between + within / K (``variance_parts``) and the sign-flip test in its
large-sample form: an approximation, as the docs say.

Example::

    mde(pilot, "new", "old")                          # at the pilot's T and K
    mde(pilot, "new", "old", n_tasks=200, n_repeats=3)
    required_tasks(pilot, "new", "old", effect=0.05)
    power_at(pilot, "new", "old", effect=0.1, n_tasks=50)
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
import pandas as pd
from scipy import optimize

from coder_eval.analysis.stats.amounts import MIN_TASKS
from coder_eval.analysis.stats.compare import paired_means
from coder_eval.analysis.stats.intervals import NAN, SEED, FloatArray
from coder_eval.analysis.stats.metrics import check_variants, metric_kind, metric_values, renumbered
from coder_eval.analysis.stats.paired import ALPHA, POWER
from coder_eval.analysis.stats.power_model import DifferenceModel, normal_sign_flip_power
from coder_eval.errors import AnalysisError

MAX_TASKS = 1_000_000


class VarianceParts(NamedTuple):
    """Var(d) of a pilot split into between-task and per-repeat within-task parts."""

    n_tasks: int
    n_repeats: int
    var_diff: float
    between: float
    within: float
    """Per-repeat within-task variance, both arms summed: contributes within / K to Var(d)."""

    def var_at(self, n_repeats: int) -> float:
        """Var(d) expected with ``n_repeats`` repeats per task and variant."""
        if n_repeats != self.n_repeats and self.n_repeats < 2:
            raise AnalysisError("planning another number of repeats needs a pilot with repeats (K >= 2)")
        return self.between + self.within / n_repeats


class Pilot(NamedTuple):
    """A pilot's paired differences on the verdict's scale, and how to model them."""

    d: FloatArray
    """d_i, or log ratios when ``ratio``."""
    ratio: bool
    bound: float | None
    """1.0 for pass rates and scores (the lattice model may apply); None for amounts."""
    min_tasks: int
    parts: VarianceParts


def pilot_of(episodes: pd.DataFrame, a: str, b: str, metric: str) -> Pilot:
    """Read a pilot: paired task means, the verdict's scale, and the variance parts on that scale."""
    episodes = renumbered(episodes)
    check_variants(episodes, a, b)
    metric_values(episodes, metric)
    kind = metric_kind(metric, episodes if metric in episodes.columns else None)
    wide = paired_means(episodes, a, b, metric).dropna(subset=[("mean", a), ("mean", b)])
    if len(wide) < 2:
        raise AnalysisError(f"planning needs at least 2 tasks with valid episodes in both {a!r} and {b!r}")
    ma, mb = wide[("mean", a)].to_numpy(float), wide[("mean", b)].to_numpy(float)
    ratio = kind == "amount" and bool(np.all(ma > 0) and np.all(mb > 0))
    d = np.log(ma) - np.log(mb) if ratio else ma - mb
    repeats = int(wide[["n"]].to_numpy(float).min())
    var_d = float(np.var(d, ddof=1))
    within = float(np.nanmean(np.nansum(within_parts(wide, a, b, ratio), axis=0))) if repeats >= 2 else 0.0
    parts = VarianceParts(len(d), repeats, var_d, max(var_d - within / repeats, 0.0), within)
    bound = None if kind == "amount" else 1.0
    return Pilot(d, ratio, bound, MIN_TASKS if kind == "amount" else 0, parts)


def within_parts(wide: pd.DataFrame, a: str, b: str, log: bool) -> FloatArray:
    """Per arm and task, the variance between repeats (on the log scale by the delta method)."""
    arms = [
        wide[("var", v)].to_numpy(float) / (wide[("mean", v)].to_numpy(float) ** 2 if log else 1)
        for v in (a, b)
    ]
    return np.asarray(arms, dtype=float)


def variance_parts(episodes: pd.DataFrame, a: str, b: str, metric: str = "passed") -> VarianceParts:
    """Split the pilot's Var(d) into between-task and within-task parts (log scale for amounts' ratios).

    Example: ``variance_parts(pilot, "new", "old").var_at(5)``
    """
    return pilot_of(episodes, a, b, metric).parts


def to_scale(pilot: Pilot, effect: float) -> float:
    """An effect on the verdict's scale: log of a ratio, or the difference itself."""
    if effect == 0 or (pilot.ratio and effect == 1):
        raise AnalysisError("effect must be a non-zero difference (or a ratio other than 1)")
    if pilot.ratio:
        if effect <= 0:
            raise AnalysisError(f"for this metric the effect is a ratio a / b > 0 (got {effect})")
        return abs(math.log(effect))
    if pilot.bound is not None and abs(effect) > pilot.bound:
        raise AnalysisError(f"a difference of pass rates or scores lies within [-1, 1] (got {effect})")
    return abs(effect)


def power_of(
    pilot: Pilot, delta: float, n_tasks: int, n_repeats: int | None, alpha: float, seed: int
) -> float:
    """Power at ``delta`` (verdict scale): the simulation model at the pilot's K, else the normal form."""
    if n_repeats is None or n_repeats == pilot.parts.n_repeats:
        return DifferenceModel.from_pilot(pilot.d, pilot.bound, pilot.min_tasks, seed).power(
            delta, n_tasks, alpha
        )
    if n_tasks < max(pilot.min_tasks, 2):
        return 0.0
    sd = math.sqrt(pilot.parts.var_at(n_repeats))
    return NAN if sd == 0 else normal_sign_flip_power(delta, sd, n_tasks, alpha)


def power_at(
    episodes: pd.DataFrame,
    a: str,
    b: str,
    effect: float,
    metric: str = "passed",
    n_tasks: int | None = None,
    n_repeats: int | None = None,
    alpha: float = ALPHA,
    seed: int = SEED,
) -> float:
    """Probability that ``compare`` calls a verdict when the true effect is ``effect`` (default: this T, K);
    NaN for another K when the pilot's differences have no spread (nothing to scale).

    Example: ``power_at(runs.episodes, "new", "old", effect=0.1)`` -> ``0.42``
    """
    pilot = pilot_of(episodes, a, b, metric)
    return power_of(pilot, to_scale(pilot, effect), n_tasks or pilot.parts.n_tasks, n_repeats, alpha, seed)


def mde(
    episodes: pd.DataFrame,
    a: str,
    b: str,
    metric: str = "passed",
    power: float = POWER,
    n_tasks: int | None = None,
    n_repeats: int | None = None,
    alpha: float = ALPHA,
    seed: int = SEED,
) -> float:
    """Smallest effect ``compare`` calls with probability ``power`` at T and K (default: the pilot's).

    A difference for rates and scores, a ratio ≥ 1 for amounts; NaN when no effect reaches the power.
    Example: ``mde(pilot, "new", "old", n_tasks=300)``
    """
    pilot = pilot_of(episodes, a, b, metric)
    t = n_tasks or pilot.parts.n_tasks
    if n_repeats is None or n_repeats == pilot.parts.n_repeats:
        model = DifferenceModel.from_pilot(pilot.d, pilot.bound, pilot.min_tasks, seed)
        delta = model.mde(t, power, alpha)
    else:
        delta = normal_mde(pilot, t, n_repeats, power, alpha)
    return math.exp(delta) if pilot.ratio and not math.isnan(delta) else delta


def normal_mde(pilot: Pilot, n_tasks: int, n_repeats: int, power: float, alpha: float) -> float:
    """MDE from the sign-flip test's normal form with Var(d) at ``n_repeats``."""
    sd = math.sqrt(pilot.parts.var_at(n_repeats))
    top = pilot.bound if pilot.bound is not None else 50 * sd
    if (
        sd == 0
        or n_tasks < max(pilot.min_tasks, 2)
        or normal_sign_flip_power(top, sd, n_tasks, alpha) < power
    ):
        return NAN  # no spread: the MDE is undefined (not the 1e-12 a solver would find)
    return float(optimize.brentq(lambda x: normal_sign_flip_power(x, sd, n_tasks, alpha) - power, 1e-12, top))


def required_tasks(
    episodes: pd.DataFrame,
    a: str,
    b: str,
    effect: float,
    power: float = POWER,
    metric: str = "passed",
    n_repeats: int | None = None,
    alpha: float = ALPHA,
    seed: int = SEED,
) -> int:
    """Fewest tasks at which ``compare`` calls ``effect`` with probability ``power`` (doubling, bisection).

    Example: ``required_tasks(pilot, "new", "old", effect=0.05, n_repeats=3)`` -> ``412``
    """
    pilot = pilot_of(episodes, a, b, metric)
    delta = to_scale(pilot, effect)
    high = max(pilot.min_tasks, 2)
    if math.isnan(power_of(pilot, delta, high, n_repeats, alpha, seed)):
        raise AnalysisError(
            "the pilot's paired differences have no spread, so another number of repeats cannot be planned"
        )
    while power_of(pilot, delta, high, n_repeats, alpha, seed) < power:
        if high >= MAX_TASKS:
            raise AnalysisError(
                f"no number of tasks up to {MAX_TASKS} reaches power {power} for effect {effect}"
            )
        high *= 2
    low = high // 2
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (
            (low, middle)
            if power_of(pilot, delta, middle, n_repeats, alpha, seed) >= power
            else (middle, high)
        )
    return high
