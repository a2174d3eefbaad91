"""``summarize``: one metric per group with a task-clustered interval and its method; and
``suite_rollups``, the same per suite (a task folder or a tag).

Example::

    summarize(runs.episodes)                       # pass rate per variant
    summarize(runs.episodes, metric="cost_usd")    # mean cost, cluster bootstrap BCa
    summarize(runs.episodes, estimand="fixed_tasks")   # these tasks only (needs repeats)
    suite_rollups(runs.episodes, by="tag")         # counts, pass rate, cost, tokens per tag
"""

from __future__ import annotations

import os
from pathlib import PurePath
from typing import Literal

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
from coder_eval.errors import AnalysisError

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


SuiteBy = Literal["folder", "tag"]
UNTAGGED = "(untagged)"
UNKNOWN_FOLDER = "(unknown)"
ROLLUP_COLUMNS = [
    "suite_by", "suite", "variant_id", "n_tasks", "n_episodes", "n_pass", "n_fail", "n_invalid",
    "pass_rate", "pass_rate_low", "pass_rate_high", "pass_rate_method",
    "cost_usd", "n_cost_unknown", "cost_usd_mean", "cost_usd_low", "cost_usd_high", "cost_usd_method",
    "total_tokens", "total_tokens_mean", "total_tokens_low", "total_tokens_high", "total_tokens_method",
]  # fmt: skip
MEANS = {"passed": "pass_rate", "cost_usd": "cost_usd_mean", "total_tokens": "total_tokens_mean"}


def suite_rollups(
    episodes: pd.DataFrame,
    by: SuiteBy = "folder",
    confidence: float = 0.95,
    n_resamples: int = N_RESAMPLES,
    seed: int = SEED,
) -> pd.DataFrame:
    """Per suite and variant: what ran, how it went, what it cost (the original coder_eval's
    per-suite roll-up), with the intervals :func:`summarize` gives the whole run.

    A suite is the folder of the task file (``by="folder"``, named relative to the folder every task
    folder of the frame is in; ``(unknown)`` when not recorded) or a task tag (``by="tag"``: an
    episode counts in the suite of each of its tags, untagged ones in ``(untagged)``). Columns:
    ``n_tasks``, ``n_episodes`` and ``n_pass`` / ``n_fail`` / ``n_invalid`` (every episode); the pass
    rate with its interval and method, and the mean cost and tokens per episode with theirs
    (:func:`summarize`: valid episodes, the task as the unit); ``cost_usd`` and ``total_tokens``, the
    sums over every episode (invalid ones cost too; ``n_cost_unknown`` episodes had no price).

    Example: ``suite_rollups(runs.episodes)[["suite", "variant_id", "pass_rate", "pass_rate_low"]]``
    """
    frame = with_suites(episodes, by)
    if frame.empty:
        return pd.DataFrame(columns=ROLLUP_COLUMNS)
    keys = ["suite", "variant_id"]
    outcome = frame["outcome"]
    counted = frame.assign(_pass=outcome == "pass", _fail=outcome == "fail", _invalid=is_invalid(frame))
    counted = counted.assign(_tokens=metric_values(frame, "total_tokens"), _unpriced=frame["cost_usd"].isna())
    table = counted.groupby(keys, sort=True).agg(
        n_tasks=("task_id", "nunique"), n_episodes=("episode_id", "size"), n_pass=("_pass", "sum"),
        n_fail=("_fail", "sum"), n_invalid=("_invalid", "sum"), cost_usd=("cost_usd", _total),
        n_cost_unknown=("_unpriced", "sum"), total_tokens=("_tokens", _total),
    ).reset_index()  # fmt: skip
    for metric, name in MEANS.items():
        stem = name.removesuffix("_mean")
        est = summarize(frame, metric, keys, confidence, n_resamples, seed)
        est = est[[*keys, "mean", "ci_low", "ci_high", "method"]].rename(
            columns={
                "mean": name,
                "ci_low": f"{stem}_low",
                "ci_high": f"{stem}_high",
                "method": f"{stem}_method",
            }
        )
        table = table.merge(est, on=keys)
    return table.assign(suite_by=by)[ROLLUP_COLUMNS]


def _total(values: pd.Series) -> float:
    """The sum of the known values; NaN when none is known."""
    return float(values.sum(min_count=1))


def with_suites(episodes: pd.DataFrame, by: SuiteBy) -> pd.DataFrame:
    """``episodes`` with a ``suite`` column (one row per episode and suite, see :func:`suite_rollups`)."""
    if by == "tag":
        check_columns(episodes, ["tags"])
        return renumbered(episodes.assign(suite=episodes["tags"].map(_tag_suites)).explode("suite"))
    if by != "folder":
        raise AnalysisError(f"suites are by 'folder' or 'tag' (got {by!r})")
    if "task_folder" not in episodes.columns:
        return renumbered(episodes.assign(suite=UNKNOWN_FOLDER))
    folders = episodes["task_folder"]
    names = folder_names([str(f) for f in folders.dropna().unique()])
    return renumbered(episodes.assign(suite=[names.get(f, UNKNOWN_FOLDER) for f in folders]))


def folder_names(folders: list[str]) -> dict[str, str]:
    """Each folder named relative to the folder they are all in (that folder itself by its name).

    Example: ``folder_names(["/s/tasks/a", "/s/tasks/b/c"])`` ->
    ``{"/s/tasks/a": "a", "/s/tasks/b/c": "b/c"}``.
    """
    if not folders:
        return {}
    root = PurePath(os.path.commonpath(folders))
    named = {f: PurePath(f).relative_to(root).as_posix() for f in folders}
    return {f: name if name != "." else (root.name or str(root)) for f, name in named.items()}


def _tag_suites(tags: object) -> list[str]:
    return sorted({str(t) for t in tags}) if isinstance(tags, list | tuple) and tags else [UNTAGGED]
