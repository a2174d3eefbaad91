"""``summarize``: one metric per group with a task-clustered interval and its method.

Example::

    summarize(runs.episodes)                       # pass rate per variant
    summarize(runs.episodes, metric="cost_usd")    # mean cost, cluster bootstrap BCa
    summarize(runs.episodes, estimand="fixed_tasks")   # these tasks only (needs repeats)
"""

from __future__ import annotations

import pandas as pd

from coder_eval.analysis.stats.estimate import Estimand, check_estimand, task_estimate
from coder_eval.analysis.stats.intervals import N_RESAMPLES, SEED
from coder_eval.analysis.stats.metrics import (
    check_columns,
    is_invalid,
    metric_kind,
    metric_values,
    renumbered,
    task_means,
)

SUMMARY_COLUMNS = [
    "n_tasks",
    "n_episodes",
    "n_invalid_excluded",
    "n_missing_excluded",
    "mean",
    "ci_low",
    "ci_high",
    "method",
]


def summarize(
    episodes: pd.DataFrame,
    metric: str = "passed",
    by: str | list[str] = "variant_id",
    confidence: float = 0.95,
    n_resamples: int = N_RESAMPLES,
    seed: int = SEED,
    estimand: Estimand = "population",
) -> pd.DataFrame:
    """Per group: the mean over tasks of per-task means, its interval and the method.

    Invalid episodes are excluded and counted (``n_invalid_excluded``); so are episodes with no
    value for the metric, e.g. an unknown cost (``n_missing_excluded``). Columns: the group keys,
    n_tasks, n_episodes, n_invalid_excluded, n_missing_excluded, mean, ci_low, ci_high, method.
    ``estimand="fixed_tasks"`` describes these tasks only (docs/statistics.md).

    Example::

        summarize(runs.episodes, metric="total_tokens", by=["variant_id", "model"])
    """
    check_estimand(estimand)
    keys = [by] if isinstance(by, str) else list(by)
    episodes = renumbered(episodes)
    check_columns(episodes, [*keys, "task_id"])
    kind = metric_kind(metric, episodes if metric in episodes.columns else None)
    frame = episodes.assign(_value=metric_values(episodes, metric), _invalid=is_invalid(episodes))
    rows = []
    for group, part in frame.groupby(keys, observed=True, sort=True):
        valid = part[~part["_invalid"]]
        n_values = int(valid["_value"].notna().sum())
        means = task_means(valid, metric, keys)
        est = task_estimate(
            means["mean"].to_numpy(float), kind, means["n"].to_numpy(float), means["var"].to_numpy(float),
            confidence, n_resamples, seed, estimand,
        )  # fmt: skip
        rows.append((*group, len(means), n_values, len(part) - len(valid), len(valid) - n_values, *est))
    return pd.DataFrame(rows, columns=[*keys, *SUMMARY_COLUMNS])
