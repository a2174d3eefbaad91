"""Tool usage: calls per tool and variant, error rates, the most frequent commands and errors.

These describe behaviour, not success, so invalid episodes are included.

Example::

    runs = load_runs("runs/latest")
    tool_usage(runs.tool_calls)          # calls per tool × variant, total, errors, error rate
    frequent_calls(runs.tool_calls, "Bash")
"""

from __future__ import annotations

import pandas as pd

from coder_eval.analysis.stats.metrics import check_columns


def _with_errors(tool_calls: pd.DataFrame) -> pd.DataFrame:
    check_columns(tool_calls, ("name", "variant_id", "is_error", "input_summary"), "tool_calls")
    return tool_calls.assign(is_error=tool_calls["is_error"].fillna(False).astype(bool))


def tool_usage(tool_calls: pd.DataFrame) -> pd.DataFrame:
    """One row per tool: calls per variant, ``total``, ``errors`` and ``error_rate``, most used first.

    An empty frame (no tool calls at all) gives an empty table with the same columns.
    Example: ``tool_usage(runs.tool_calls).loc["Bash", "total"]``
    """
    calls = _with_errors(tool_calls)
    counts = pd.crosstab(calls["name"], calls["variant_id"]).rename_axis(index="tool", columns=None)
    counts["total"] = counts.sum(axis=1).astype("int64")
    counts["errors"] = calls.groupby("name")["is_error"].sum().reindex(counts.index).fillna(0).astype("int64")
    counts["error_rate"] = counts["errors"] / counts["total"].where(counts["total"] > 0)
    return counts.sort_values("total", ascending=False)


def frequent_calls(tool_calls: pd.DataFrame, tool: str = "Bash", n: int = 10) -> pd.DataFrame:
    """The ``n`` most frequent inputs of one tool (for Bash: the commands), with their call counts.

    Example: ``frequent_calls(runs.tool_calls, "Bash", 5)``
    """
    calls = _with_errors(tool_calls)
    counts = calls.loc[calls["name"] == tool, "input_summary"].value_counts().head(n)
    return counts.rename_axis("input").to_frame("calls")


def frequent_errors(tool_calls: pd.DataFrame, n: int = 10) -> pd.DataFrame:
    """The ``n`` most frequent (tool, input) pairs whose result was an error.

    Example: ``frequent_errors(runs.tool_calls)``
    """
    calls = _with_errors(tool_calls)
    failed = calls[calls["is_error"]]
    counts = failed.groupby(["name", "input_summary"]).size().sort_values(ascending=False).head(n)
    return counts.rename_axis(["tool", "input"]).to_frame("errors")
