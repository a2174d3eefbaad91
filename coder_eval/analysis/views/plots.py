"""Plots for reports; each takes a matplotlib ``ax`` and returns it.

Example::

    fig, ax = plt.subplots()
    pass_rate_plot(summarize(runs.episodes), ax)
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib import ticker
from matplotlib.axes import Axes

from coder_eval.analysis.stats.classification import Classification
from coder_eval.analysis.stats.intervals import N_RESAMPLES, SEED
from coder_eval.analysis.stats.metrics import check_columns, task_means, valid_episodes
from coder_eval.analysis.stats.summary import summarize

VERDICT_COLOURS = {"a_better": "tab:green", "b_better": "tab:red", "inconclusive": "tab:gray"}
OUTCOME_CODES = {"fail": 0.0, "pass": 1.0}


def pass_rate_plot(summary: pd.DataFrame, ax: Axes, by: str = "variant_id") -> Axes:
    """Bars of the mean per group with interval whiskers; input is ``summarize(...)``.

    Example: ``pass_rate_plot(summarize(runs.episodes), ax)``
    """
    check_columns(summary, [by, "mean", "ci_low", "ci_high"], "summary")
    x = np.arange(len(summary))
    mean = summary["mean"].to_numpy(float)
    err = np.vstack([mean - summary["ci_low"].to_numpy(float), summary["ci_high"].to_numpy(float) - mean])
    ax.bar(x, mean, color="tab:blue", alpha=0.7)
    ax.errorbar(x, mean, yerr=err, fmt="none", ecolor="black", capsize=4)
    ax.set_xticks(x, summary[by].astype(str))
    ax.set_ylim(0, 1)
    ax.set_ylabel("pass rate (95% CI)")
    return ax


def forest_plot(comparisons: pd.DataFrame, ax: Axes) -> Axes:
    """One row per comparison with its interval, coloured by verdict, and a line at "no difference".

    Rows whose verdict rests on the ratio (``basis == "ratio"``: amounts) are drawn as ratios on a
    log scale when every row does; otherwise differences. Input: ``comparisons_frame([...])`` or
    ``compare_all(...)``. Example: ``forest_plot(frame, ax)``
    """
    check_columns(comparisons, ["metric", "a", "b", "diff", "ci_low", "ci_high", "verdict"], "comparisons")
    on_ratio = "basis" in comparisons.columns and bool((comparisons["basis"] == "ratio").all())
    verdicts = "verdict_ci_low" in comparisons.columns
    ends = (
        ("verdict_ci_low", "verdict_ci_high")
        if verdicts
        else (("ratio_ci_low", "ratio_ci_high") if on_ratio else ("ci_low", "ci_high"))
    )
    y = np.arange(len(comparisons))[::-1]
    point = comparisons["ratio" if on_ratio else "diff"].to_numpy(float)
    low, high = (comparisons[c].to_numpy(float) for c in ends)
    if verdicts and not on_ratio:  # rows on the ratio among rows on the difference: their difference
        low = np.where(comparisons["basis"] == "ratio", comparisons["ci_low"], low)
        high = np.where(comparisons["basis"] == "ratio", comparisons["ci_high"], high)
    low, high = drawable(point, low, high, on_ratio)
    colours = [VERDICT_COLOURS.get(str(v), "black") for v in comparisons["verdict"]]
    ax.hlines(y, low, high, colors=colours, linewidth=2)
    ax.scatter(point, y, c=colours, zorder=3)
    ax.axvline(1 if on_ratio else 0, color="black", linewidth=0.8, linestyle="--")
    if on_ratio:
        ratio_axis(ax, np.concatenate([low, high, point, [1.0]]))
    sign = " / " if on_ratio else " − "
    labels = (
        comparisons["metric"].astype(str)
        + ": "
        + comparisons["a"].astype(str)
        + sign
        + comparisons["b"].astype(str)
    )
    ax.set_yticks(y, labels.tolist())
    ax.set_xlabel(f"{'ratio a / b' if on_ratio else 'paired difference a − b'} (95% CI)")
    return ax


def drawable(
    point: np.ndarray, low: np.ndarray, high: np.ndarray, on_ratio: bool
) -> tuple[np.ndarray, np.ndarray]:
    """Unbounded ends (too few tasks for the test to exclude anything) drawn to the plot's edge."""
    finite = np.concatenate([point, low, high])
    finite = finite[np.isfinite(finite) & ((finite > 0) if on_ratio else True)]
    if on_ratio:
        edge_low, edge_high = (finite.min() / 2, finite.max() * 2) if len(finite) else (0.5, 2.0)
        low = np.where((low <= 0) | ~np.isfinite(low), edge_low, low)
    else:
        span = float(np.ptp(finite)) if len(finite) else 1.0
        edge_low, edge_high = (finite.min() - span, finite.max() + span) if len(finite) else (-1.0, 1.0)
        low = np.where(np.isneginf(low), edge_low, low)
    return low, np.where(np.isposinf(high), edge_high, high)


def ratio_axis(ax: Axes, values: np.ndarray) -> None:
    """A log axis for ratios with plain tick labels (×0.8, ×1, ×1.25), never 10^-1 or 6×10^-1."""
    ax.set_xscale("log")
    values = values[np.isfinite(values) & (values > 0)]
    low, high = float(values.min()), float(values.max())
    ax.set_xlim(low / 1.1, high * 1.1)
    ax.xaxis.set_major_locator(
        ticker.LogLocator(base=10, subs=(1.0, 1.1, 1.25, 1.5, 2.0, 3.0, 5.0, 8.0, 9.0), numticks=12)
    )
    ax.xaxis.set_minor_locator(ticker.NullLocator())
    ax.xaxis.set_major_formatter(ticker.FuncFormatter(lambda x, _: f"×{x:.3g}"))


def distribution_plot(episodes: pd.DataFrame, ax: Axes, metric: str = "total_tokens") -> Axes:
    """Per-task means of a metric (tokens, cost, ...) per variant: box plus points.

    Example: ``distribution_plot(runs.episodes, ax, metric="cost_usd")``
    """
    means = task_means(valid_episodes(episodes), metric)
    sns.boxplot(data=means, x="variant_id", y="mean", ax=ax, color="white", showfliers=False)
    sns.stripplot(data=means, x="variant_id", y="mean", ax=ax, alpha=0.6, size=4)
    ax.set_ylabel(f"{metric} (mean per task)")
    return ax


def cost_vs_pass_plot(
    episodes: pd.DataFrame, ax: Axes, cost: str = "cost_usd", n_resamples: int = N_RESAMPLES, seed: int = SEED
) -> Axes:
    """Mean cost against pass rate per variant, with intervals on both axes.

    Example: ``cost_vs_pass_plot(runs.episodes, ax)``
    """
    rates = summarize(episodes, "passed", n_resamples=n_resamples, seed=seed)
    costs = summarize(episodes, cost, n_resamples=n_resamples, seed=seed)
    both = rates.merge(costs, on="variant_id", suffixes=("_pass", "_cost"))
    x, y = both["mean_cost"].to_numpy(float), both["mean_pass"].to_numpy(float)
    xerr = np.vstack([x - both["ci_low_cost"].to_numpy(float), both["ci_high_cost"].to_numpy(float) - x])
    yerr = np.vstack([y - both["ci_low_pass"].to_numpy(float), both["ci_high_pass"].to_numpy(float) - y])
    for i, variant in enumerate(both["variant_id"].astype(str)):
        ax.errorbar(
            x[i], y[i], xerr=xerr[:, i : i + 1], yerr=yerr[:, i : i + 1], fmt="o", capsize=3, label=variant
        )
    ax.set_xlabel(f"mean {cost} per task (95% CI)")
    ax.set_ylabel("pass rate (95% CI)")
    ax.legend(title="variant")
    return ax


def confusion_plot(result: Classification, ax: Axes) -> Axes:
    """Heatmap of the confusion matrix (expected rows, observed columns), annotated with counts.

    Example: ``confusion_plot(classification(runs.criteria), ax)``
    """
    confusion = result.confusion.rename(index=plain_text, columns=plain_text)
    sns.heatmap(confusion, annot=True, fmt="d", cmap="Blues", cbar=False, ax=ax)
    ax.set_title(plain_text(f"{result.criterion_id}: accuracy {result.accuracy:.0%} (n={result.n})"))
    return ax


def plain_text(text: object) -> str:
    """Text drawn as it is: ``$`` would start matplotlib's math mode (and a stray one fails the figure)."""
    return str(text).replace("$", r"\$")


def flips_heatmap(episodes: pd.DataFrame, ax: Axes, only_changed: bool = True) -> Axes:
    """Tasks × variants: pass rate over valid episodes; grey cells with ``invalid`` had none valid.

    With ``only_changed`` only tasks whose results differ between variants are shown.
    Example: ``flips_heatmap(runs.episodes, ax)``
    """
    check_columns(episodes, ["task_id", "variant_id", "outcome"])
    rates = episodes.assign(value=episodes["outcome"].map(OUTCOME_CODES)).pivot_table(
        index="task_id", columns="variant_id", values="value", aggfunc="mean", dropna=False
    )
    rates = rates.reindex(sorted(episodes["task_id"].unique()))
    if only_changed:
        rates = rates[rates.nunique(axis=1, dropna=False) > 1]
    annot = rates.map(lambda v: "invalid" if pd.isna(v) else f"{v:.0%}")
    sns.heatmap(
        rates,
        mask=rates.isna(),
        annot=annot,
        fmt="",
        cmap="RdYlGn",
        vmin=0,
        vmax=1,
        ax=ax,
        cbar_kws={"label": "pass rate"},
    )
    ax.set_facecolor("lightgrey")
    return ax
