"""Planning from a pilot: minimum detectable effect and tasks needed, for any number of repeats.

Var(d) of the per-task differences splits into a between-task part and a within-task part that
shrinks with the repeats K: Var(d) = between + within / K (STATS.md, "Power").

Example::

    mde(pilot, "new", "old")                          # at the pilot's T and K
    mde(pilot, "new", "old", n_tasks=200, n_repeats=3)
    required_tasks(pilot, "new", "old", effect=0.05)
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
import pandas as pd

from coder_eval.analysis.compare import paired_means
from coder_eval.analysis.metrics import check_variants, metric_values
from coder_eval.analysis.paired import ALPHA, POWER, z_sum
from coder_eval.errors import AnalysisError


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


def variance_parts(episodes: pd.DataFrame, a: str, b: str, metric: str = "passed") -> VarianceParts:
    """Split the pilot's Var(d) into between-task and within-task parts.

    Example: ``variance_parts(pilot, "new", "old").var_at(5)``
    """
    check_variants(episodes, a, b)
    metric_values(episodes, metric)
    wide = paired_means(episodes, a, b, metric).dropna()
    if len(wide) < 2:
        raise AnalysisError(f"planning needs at least 2 tasks with valid episodes in both {a!r} and {b!r}")
    d = (wide[("mean", a)] - wide[("mean", b)]).to_numpy(float)
    repeats = int(wide["n"].to_numpy(float).min())
    var_diff = float(np.var(d, ddof=1))
    if repeats < 2:
        return VarianceParts(len(d), repeats, var_diff, var_diff, 0.0)
    within = within_variance(episodes, a, b, metric, wide.index)
    return VarianceParts(len(d), repeats, var_diff, max(var_diff - within / repeats, 0.0), within)


def within_variance(episodes: pd.DataFrame, a: str, b: str, metric: str, tasks: pd.Index) -> float:
    """Mean over tasks of the per-repeat variance within a task, summed over the two arms."""
    chosen = episodes[episodes["task_id"].isin(tasks) & (episodes["outcome"] != "invalid")]
    values = metric_values(chosen, metric).rename("value")
    frame = pd.concat([chosen[["variant_id", "task_id"]], values], axis=1)
    var = frame[frame["variant_id"].isin([a, b])].groupby(["task_id", "variant_id"])["value"].var(ddof=1)
    return float(var.groupby(level="task_id").sum().mean())


def mde(
    episodes: pd.DataFrame,
    a: str,
    b: str,
    metric: str = "passed",
    power: float = POWER,
    n_tasks: int | None = None,
    n_repeats: int | None = None,
    alpha: float = ALPHA,
) -> float:
    """Minimum detectable effect ``(z_{α/2} + z_β) · √(Var(d) / T)`` at the given T and K.

    Defaults to the pilot's own T and K. Example: ``mde(pilot, "new", "old", n_tasks=300)``
    """
    parts = variance_parts(episodes, a, b, metric)
    t = n_tasks or parts.n_tasks
    var = parts.var_at(n_repeats or parts.n_repeats)
    return z_sum(power, alpha) * math.sqrt(var / t)


def required_tasks(
    episodes: pd.DataFrame,
    a: str,
    b: str,
    effect: float,
    power: float = POWER,
    metric: str = "passed",
    n_repeats: int | None = None,
    alpha: float = ALPHA,
) -> int:
    """Tasks needed to detect ``effect`` (an absolute difference): ``(z_{α/2} + z_β)² · Var(d) / δ²``.

    Example: ``required_tasks(pilot, "new", "old", effect=0.05, n_repeats=3)`` -> ``412``
    """
    if effect == 0:
        raise AnalysisError("effect must be non-zero")
    parts = variance_parts(episodes, a, b, metric)
    var = parts.var_at(n_repeats or parts.n_repeats)
    return max(2, math.ceil(z_sum(power, alpha) ** 2 * var / effect**2))
