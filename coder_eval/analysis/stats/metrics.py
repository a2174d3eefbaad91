"""Metric names and kinds, input checks, and the step every statistic starts from: task means.

A metric's *kind* picks its method (STATS.md): ``binary`` (pass rates), ``proportion`` (scores in
[0, 1]) and ``amount`` (tokens, cost, duration, turns, tool calls; heavy-tailed, lower is better).

Example::

    metric_kind("cost_usd")          # 'amount'
    higher_is_better("cost_usd")     # False
    task_means(valid_episodes(df), "passed", "variant_id")
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

import pandas as pd
from pandas.api.types import is_bool_dtype, is_numeric_dtype

from coder_eval.errors import AnalysisError, unknown_name

MetricKind = Literal["binary", "proportion", "amount"]
LOWER_IS_BETTER = frozenset(
    {
        "input_tokens",
        "output_tokens",
        "cache_read_tokens",
        "cache_creation_tokens",
        "total_tokens",
        "cost_usd",
        "duration_s",
        "agent_s",
        "num_turns",
        "n_tool_calls",
    }
)
PROPORTIONS = frozenset({"score"})
TOKEN_BUCKETS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_creation_tokens")
OUTCOME_PASSED = {"pass": 1.0, "fail": 0.0}


def higher_is_better(metric: str) -> bool:
    """False for tokens, cost, duration, turns and tool calls (a lower value wins); True otherwise.

    Example: ``higher_is_better("passed")`` -> ``True``; ``higher_is_better("cost_usd")`` -> ``False``
    """
    return metric not in LOWER_IS_BETTER


def metric_kind(metric: str, episodes: pd.DataFrame | None = None) -> MetricKind:
    """The kind that picks a metric's interval and test.

    Example: ``metric_kind("passed")`` -> ``'binary'``
    """
    if metric == "passed" or (episodes is not None and is_bool_dtype(episodes[metric].dtype)):
        return "binary"
    return "proportion" if metric in PROPORTIONS else "amount"


def metric_names(episodes: pd.DataFrame) -> list[str]:
    """Metrics available in a frame: ``passed``, ``total_tokens`` and every numeric column."""
    numeric = [c for c in episodes.columns if is_numeric_dtype(episodes[c].dtype) and c != "repeat"]
    return sorted({"passed", "total_tokens", *numeric})


def check_metric(episodes: pd.DataFrame, metric: str) -> None:
    """Raise AnalysisError naming the valid metrics when ``metric`` is not one."""
    valid = metric_names(episodes)
    if metric not in valid:
        raise AnalysisError(unknown_name("metric", metric, valid))


def check_columns(frame: pd.DataFrame, columns: Iterable[str], what: str = "episodes") -> None:
    """Raise AnalysisError when a needed column is missing, listing the frame's columns."""
    for column in columns:
        if column not in frame.columns:
            raise AnalysisError(unknown_name(f"column of the {what} frame", column, map(str, frame.columns)))


def check_variants(episodes: pd.DataFrame, *variants: str, by: str = "variant_id") -> None:
    """Raise AnalysisError naming the valid variants when one is unknown."""
    check_columns(episodes, [by])
    valid = [str(v) for v in episodes[by].dropna().unique()]
    for variant in variants:
        if variant not in valid:
            raise AnalysisError(unknown_name("variant", variant, valid))


def renumbered(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame with a fresh 0..n−1 index: frames joined by ``pd.concat`` repeat index labels.

    Example: ``renumbered(pd.concat([runs_a.episodes, runs_b.episodes]))``
    """
    return frame.reset_index(drop=True)


def metric_values(episodes: pd.DataFrame, metric: str) -> pd.Series:
    """The metric as floats (``passed`` -> 1.0 / 0.0 / NaN; ``total_tokens`` derived when absent).

    A missing ``passed`` on an episode whose outcome is ``pass`` or ``fail`` is read from the
    outcome, so every function counts such episodes the same way.
    """
    if metric == "total_tokens" and metric not in episodes.columns:
        check_columns(episodes, TOKEN_BUCKETS)
        return episodes[list(TOKEN_BUCKETS)].sum(axis=1, min_count=1).astype(float)
    check_metric(episodes, metric)
    values = episodes[metric].astype(float)
    if metric == "passed" and "outcome" in episodes.columns:
        return values.fillna(episodes["outcome"].map(OUTCOME_PASSED).astype(float))
    return values


def is_invalid(episodes: pd.DataFrame) -> pd.Series:
    """True for episodes whose outcome is ``invalid`` (the agent was not measured)."""
    check_columns(episodes, ["outcome"])
    return episodes["outcome"] == "invalid"


def valid_episodes(episodes: pd.DataFrame) -> pd.DataFrame:
    """Episodes whose outcome is not ``invalid``."""
    return episodes[~is_invalid(episodes)]


def task_means(episodes: pd.DataFrame, metric: str, by: str | list[str] = "variant_id") -> pd.DataFrame:
    """Per (group, task): ``mean`` of the metric over repeats, ``n`` (repeats with a value), ``var``.

    ``var`` is the variance between repeats (NaN with one). Example: ``task_means(df, "passed")``
    -> columns variant_id, task_id, mean, n, var
    """
    keys = [by] if isinstance(by, str) else list(by)
    check_columns(episodes, [*keys, "task_id"])
    values = metric_values(episodes, metric).to_numpy(float)
    frame = episodes[[*keys, "task_id"]].assign(value=values).dropna(subset=["value"])
    grouped = frame.groupby([*keys, "task_id"], observed=True, sort=True)["value"]
    return grouped.agg(mean="mean", n="count", var="var").reset_index()
