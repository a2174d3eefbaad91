"""``cost_per_resolved``: Σ cost / Σ resolved per group, with a paired cluster bootstrap over tasks.

Example::

    cost_per_resolved(runs.episodes)   # variant_id, total_cost_usd, n_resolved, cost_per_resolved, ...
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from coder_eval.analysis.stats.intervals import N_RESAMPLES, NAN, SEED, FloatArray, bootstrap_interval
from coder_eval.analysis.stats.metrics import check_columns, is_invalid, metric_values, renumbered

COST_COLUMNS = [
    "n_tasks",
    "n_episodes",
    "n_invalid_excluded",
    "n_cost_missing_excluded",
    "total_cost_usd",
    "n_resolved",
    "cost_per_resolved",
    "ci_low",
    "ci_high",
    "method",
]


def ratio_of_sums(cost: FloatArray, resolved: FloatArray, axis: int = -1) -> FloatArray:
    """Σ cost / Σ resolved along ``axis``; inf where nothing is resolved."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.asarray(np.sum(cost, axis=axis) / np.sum(resolved, axis=axis))


def cost_per_resolved(
    episodes: pd.DataFrame,
    by: str = "variant_id",
    confidence: float = 0.95,
    n_resamples: int = N_RESAMPLES,
    seed: int = SEED,
) -> pd.DataFrame:
    """Per group: Σ cost_usd / Σ resolved (passed) over valid episodes with a known cost.

    The interval resamples whole tasks, keeping each task's (cost, resolved) pair together (BCa,
    percentile when BCa is undefined). Undefined (NaN) when nothing is resolved, said in ``method``.

    Example: ``cost_per_resolved(runs.episodes, by="model")``
    """
    episodes = renumbered(episodes)
    check_columns(episodes, [by, "task_id", "cost_usd", "passed", "outcome"])
    frame = episodes.assign(_invalid=is_invalid(episodes), _resolved=metric_values(episodes, "passed"))
    rows = []
    for group, part in frame.groupby(by, observed=True, sort=True):
        valid = part[~part["_invalid"]]
        priced = valid[valid["cost_usd"].notna()]
        per_task = (
            priced.assign(resolved=priced["_resolved"]).groupby("task_id")[["cost_usd", "resolved"]].sum()
        )
        cost, resolved = per_task["cost_usd"].to_numpy(float), per_task["resolved"].to_numpy(float)
        estimate, low, high, method = ratio_estimate(cost, resolved, confidence, n_resamples, seed)
        rows.append(
            (
                group,
                len(per_task),
                len(priced),
                len(part) - len(valid),
                len(valid) - len(priced),
                float(cost.sum()),
                int(resolved.sum()),
                estimate,
                low,
                high,
                method,
            )
        )
    return pd.DataFrame(rows, columns=[by, *COST_COLUMNS])


def ratio_estimate(
    cost: FloatArray, resolved: FloatArray, confidence: float, n_resamples: int, seed: int
) -> tuple[float, float, float, str]:
    """(estimate, low, high, method) of Σcost/Σresolved over per-task sums."""
    if len(cost) == 0:
        return NAN, NAN, NAN, "no valid episodes with a known cost"
    if resolved.sum() == 0:
        return NAN, NAN, NAN, "undefined: nothing resolved"
    ci, method = bootstrap_interval((cost, resolved), ratio_of_sums, confidence, n_resamples, seed)
    if np.isinf(ci.high):
        method += "; upper bound infinite (resamples with nothing resolved)"
    return float(cost.sum() / resolved.sum()), ci.low, ci.high, f"paired (cost, resolved) {method}"
