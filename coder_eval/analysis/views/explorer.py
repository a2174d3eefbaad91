"""What the explorer shows, built from what it computed: HTML and figure outputs for ``Output`` widgets,
and the pair of runs it compares when a baseline run is picked (``RunPair``).

Each function takes data (a comparison frame, episodes, criteria) and returns ``Output.outputs``
entries or a figure, so the explorer's handlers stay about state and these stay testable alone.
matplotlib and the plots are imported by the functions that draw, so the explorer's first table does
not wait for them; in a kernel a ``FigureDrawer`` draws the figures in a thread after the rest of the
page is filled.

Example::

    view.outputs = (html_output("<p>hello</p>"), figure_output(forest_figure(frame)))
"""

from __future__ import annotations

import base64
import html
import io
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from coder_eval.analysis.answer.baseline_run import (
    BASELINE,
    CANDIDATE,
    ArmRegression,
    Regression,
    against_baseline,
    labelled,
)
from coder_eval.analysis.answer.engine import Declaration
from coder_eval.analysis.answer.wording import NAMES, metric_value
from coder_eval.analysis.frames.load import Runs, load_runs
from coder_eval.analysis.stats.classification import classification
from coder_eval.analysis.views.notebook import labelled_criterion_ids, token_buckets_plot
from coder_eval.errors import AnalysisError
from coder_eval.manifest import read_manifest

if TYPE_CHECKING:
    from matplotlib.figure import Figure

Outputs = tuple[dict[str, Any], ...]
"""What an ``Output`` widget shows: its ``outputs``."""


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
    from matplotlib.figure import Figure

    from coder_eval.analysis.views.plots import forest_plot

    figure = Figure(figsize=(8, 1.1 * len(comparisons) + 0.4), layout="constrained")
    axes = figure.subplots(len(comparisons), 1, squeeze=False)[:, 0]
    for ax, index in zip(axes, comparisons.index, strict=True):
        forest_plot(comparisons.loc[[index]], ax)
        ax.set_xlabel("")
    return figure


def amounts_figure(episodes: pd.DataFrame) -> Figure:
    """Tokens and cost per task and variant, and the token buckets, as in the run report."""
    from matplotlib.figure import Figure

    from coder_eval.analysis.views.plots import distribution_plot

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
    from matplotlib.figure import Figure

    from coder_eval.analysis.views.plots import confusion_plot

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


def in_kernel() -> bool:
    """Whether this runs in a Jupyter kernel (JupyterLab, Voila), where widgets are shown live."""
    ipython = sys.modules.get("IPython")
    return getattr(ipython.get_ipython() if ipython else None, "kernel", None) is not None


class FigureDrawer:
    """Fills figure views after the rest of a page: at once (``later`` False), or in a thread, one
    view after the other, so the kernel answers the browser (the table shows) while they are drawn.
    A newer ``draw`` supersedes an older one: its views are never overwritten by the older figures.

    Example::

        drawer = FigureDrawer(later=True)
        drawer.draw(views, [("plot", lambda: (figure_output(forest_figure(frame)),))])
        drawer.wait()   # True once every figure is drawn
    """

    def __init__(self, later: bool) -> None:
        self.later = later
        self.generation = 0
        self._lock = threading.Lock()
        self._drawing = threading.Lock()  # one thread draws at a time
        self._thread: threading.Thread | None = None

    def cancel(self) -> int:
        """Let no figure of an earlier ``draw`` reach its view from now on (call it before the views
        are cleared for new content); returns the new generation."""
        with self._lock:
            self.generation += 1
            return self.generation

    def draw(self, views: Mapping[str, Any], jobs: Sequence[tuple[str, Callable[[], Outputs]]]) -> None:
        """Fill ``views[name]`` with ``make()`` for each job, now or in a thread."""
        generation = self.cancel()
        if not self.later:
            for name, make in jobs:
                views[name].outputs = make()
            return
        self._thread = threading.Thread(
            target=self._draw, args=(generation, views, jobs), name="coder-eval-figures", daemon=True
        )
        self._thread.start()

    def _draw(
        self, generation: int, views: Mapping[str, Any], jobs: Sequence[tuple[str, Callable[[], Outputs]]]
    ) -> None:
        with self._drawing:
            for name, make in jobs:
                if generation != self.generation:
                    return
                try:
                    outputs = make()
                except Exception as exc:  # shown in its view: a thread has no caller to raise to
                    why = html.escape(f"{type(exc).__name__}: {exc}")
                    outputs = (html_output(f'<div style="color:#b00">Figure not drawn: {why}</div>'),)
                with self._lock:
                    if generation != self.generation:
                        return
                    views[name].outputs = outputs

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the figures being drawn; False when ``timeout`` seconds passed first."""
        thread = self._thread
        if thread is not None:
            thread.join(timeout)
            return not thread.is_alive()
        return True


@dataclass(frozen=True)
class RunPair:
    """Two runs compared as ``run --baseline`` compares them: each variant of the candidate run
    against the baseline run's variant of the same id (or the only one against the only one), on the
    tasks both ran with the same content (``coder_eval.analysis.answer.baseline_run``).

    Example: ``RunPair.load(Path("runs/pr"), Path("runs/main")).regression(Declaration()).lines()``
    """

    candidate: Runs
    baseline: Runs
    candidate_hashes: dict[str, str]
    baseline_hashes: dict[str, str]
    candidate_id: str
    baseline_id: str

    @classmethod
    def load(cls, candidate: Path, baseline: Path) -> RunPair:
        """Both runs' frames and task content hashes (``AnalysisError`` when they are the same run)."""
        if candidate.resolve() == baseline.resolve():
            raise AnalysisError(f"{candidate.name} is the baseline run itself: pick another run to compare")
        manifests = read_manifest(candidate), read_manifest(baseline)
        return cls(
            load_runs(candidate), load_runs(baseline), dict(manifests[0].task_hashes),
            dict(manifests[1].task_hashes), manifests[0].run_id, manifests[1].run_id,
        )  # fmt: skip

    def regression(self, declaration: Declaration) -> Regression:
        """The candidate run against the baseline run, through the verdict engine."""
        return against_baseline(
            self.candidate, self.baseline, self.candidate_hashes, self.baseline_hashes, declaration
        )

    def sides(self, arm: ArmRegression, tasks: Sequence[str]) -> Runs:
        """One arm's two sides as one frame set: variants ``baseline`` and ``candidate``."""
        frames = [
            pd.concat(
                [
                    labelled(getattr(self.baseline, name), arm.baseline_variant, BASELINE, tuple(tasks)),
                    labelled(getattr(self.candidate, name), arm.variant_id, CANDIDATE, tuple(tasks)),
                ],
                ignore_index=True,
            )
            for name in ("episodes", "criteria")
        ]
        return Runs(
            frames[0], frames[1], self.candidate.tool_calls.iloc[0:0], self.candidate.messages.iloc[0:0]
        )

    def names(self, arm: ArmRegression) -> dict[str, str]:
        """How each side is shown: ``{"baseline": "<run id> · <variant>", "candidate": ...}``."""
        return {
            BASELINE: f"{self.baseline_id} · {arm.baseline_variant}",
            CANDIDATE: f"{self.candidate_id} · {arm.variant_id}",
        }


def summary_html(summary: pd.DataFrame, classes: str) -> str:
    """The per-variant summary for people: rates as percentages, amounts to three significant digits,
    each interval as ``[low, high]``, and why where there is none (never a bare NaN)."""
    rows = [_summary_row({str(k): v for k, v in r.items()}) for r in summary.to_dict("records")]
    return pd.DataFrame(rows).to_html(index=False, classes=classes)


def _summary_row(r: dict[str, Any]) -> dict[str, Any]:
    metric = str(r["metric"])
    if pd.isna(r["mean"]):
        interval = "n/a (no valid episode)"
    elif pd.isna(r["ci_low"]) or pd.isna(r["ci_high"]):
        interval = "n/a (one task)" if r["n_tasks"] < 2 else "n/a (undefined)"
    else:
        interval = (
            f"[{metric_value(metric, float(r['ci_low']))}, {metric_value(metric, float(r['ci_high']))}]"
        )
    return {
        "metric": NAMES.get(metric, metric), "variant": r["variant_id"], "tasks": int(r["n_tasks"]),
        "mean": metric_value(metric, float(r["mean"])), "95 % interval": interval, "method": r["method"],
    }  # fmt: skip
