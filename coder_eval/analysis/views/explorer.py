"""What the explorer shows, built from what it computed: HTML and figure outputs for ``Output`` widgets.

Each function takes data (a comparison frame, episodes, criteria) and returns ``Output.outputs``
entries or a figure, so the explorer's handlers stay about state and these stay testable alone.

Example::

    view.outputs = (html_output("<p>hello</p>"), figure_output(forest_figure(frame)))
"""

from __future__ import annotations

import base64
import io
from typing import Any

import pandas as pd
from matplotlib.figure import Figure

from coder_eval.analysis.stats.classification import classification
from coder_eval.analysis.views.notebook import labelled_criterion_ids, token_buckets_plot
from coder_eval.analysis.views.plots import confusion_plot, distribution_plot, forest_plot
from coder_eval.errors import AnalysisError


def html_output(markup: str) -> dict[str, Any]:
    """An ``Output.outputs`` entry that shows ``markup``."""
    return {"output_type": "display_data", "data": {"text/html": markup, "text/plain": ""}, "metadata": {}}


def figure_output(figure: Figure) -> dict[str, Any]:
    """An ``Output.outputs`` entry that shows a figure as an embedded PNG."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=80)
    png = base64.b64encode(buffer.getvalue()).decode("ascii")
    return {
        "output_type": "display_data",
        "data": {"image/png": png, "text/plain": "<figure>"},
        "metadata": {},
    }


def figure_views(*figures: Figure) -> tuple[dict[str, Any], ...]:
    """``Output.outputs`` entries for figures."""
    return tuple(figure_output(f) for f in figures)


def forest_figure(comparisons: pd.DataFrame) -> Figure:
    """One forest plot per metric (each on its own scale)."""
    figure = Figure(figsize=(8, 1.1 * len(comparisons) + 0.4), layout="constrained")
    axes = figure.subplots(len(comparisons), 1, squeeze=False)[:, 0]
    for ax, index in zip(axes, comparisons.index, strict=True):
        forest_plot(comparisons.loc[[index]], ax)
        ax.set_xlabel("")
    return figure


def amounts_figure(episodes: pd.DataFrame) -> Figure:
    """Tokens and cost per task and variant, and the token buckets, as in the run report."""
    figure = Figure(figsize=(14, 3.6), layout="constrained")
    axes = figure.subplots(1, 3)
    distribution_plot(episodes, axes[0], metric="total_tokens")
    distribution_plot(episodes, axes[1], metric="cost_usd")
    token_buckets_plot(episodes, axes[2])
    return figure


def confusion_views(
    criteria: pd.DataFrame, variants: list[str], n_resamples: int
) -> tuple[dict[str, Any], ...]:
    """A confusion matrix per labelled criterion and variant, as in the classification report."""
    ids = labelled_criterion_ids(criteria)
    if not ids or not variants:
        return (html_output("<p>No criterion of these runs records labels.</p>"),)
    figure = Figure(figsize=(5 * len(variants), 4 * len(ids)), layout="constrained")
    axes = figure.subplots(len(ids), len(variants), squeeze=False)
    for row, criterion in zip(axes, ids, strict=True):
        for ax, variant in zip(row, variants, strict=True):
            try:
                confusion_plot(
                    classification(
                        criteria[criteria["variant_id"] == variant], criterion, n_resamples=n_resamples
                    ),
                    ax,
                )
            except AnalysisError:  # this variant has no item of the criterion
                ax.set_axis_off()
                continue
            ax.set_title(f"{variant}: {ax.get_title()}")
    return figure_views(figure)
