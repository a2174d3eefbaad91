"""Interactive exploration in JupyterLab or Voila: pick runs, two variants, a metric and a tag.

The handlers keep what they computed as attributes (``episodes``, ``comparison``, ``flips``,
``transcript``, ``error``), so the logic is testable without a kernel: set a widget's ``.value`` and
read the attribute. Views are filled by assigning ``Output.outputs`` directly, which works in a kernel
and is harmless outside one.

Example (a notebook cell)::

    from coder_eval.analysis.widgets import Explorer
    Explorer("runs")          # every run under runs/ can be picked; the newest is selected
"""

from __future__ import annotations

import base64
import html
import io
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import ipywidgets as w
import pandas as pd
from matplotlib.figure import Figure

from coder_eval.analysis.compare import compare, comparisons_frame
from coder_eval.analysis.flips import flips
from coder_eval.analysis.intervals import N_RESAMPLES
from coder_eval.analysis.load import load_runs
from coder_eval.analysis.notebook import REPORT_METRICS, comparison_table, flips_table, variant_pair
from coder_eval.analysis.plots import forest_plot
from coder_eval.errors import AnalysisError, ReportError
from coder_eval.run_dir import MANIFEST
from coder_eval.transcript import transcript_text

ALL_TAGS = "(all tags)"
ALL_METRICS = "(all metrics)"
TABLE_CLASS = "explorer-comparison"
FLIPS_CLASS = "explorer-flips"


def discover_runs(paths: Sequence[str | Path]) -> tuple[dict[str, Path], list[str]]:
    """Run directories by name, and the ones to select first.

    A run directory stands for itself (all given ones are selected); any other folder offers the
    runs inside it, and its newest (the last run id in sort order) is selected.
    Example: ``discover_runs(["runs"])`` -> ``({"20250301-...": Path(...), ...}, ["20250302-..."])``
    """
    found: dict[str, Path] = {}
    selected: list[str] = []
    for path in map(Path, paths):
        if (path / MANIFEST).is_file():
            found[path.resolve().name] = path.resolve()
            selected.append(path.resolve().name)
        elif path.is_dir():
            inside = [p for p in sorted(path.iterdir()) if (p / MANIFEST).is_file() and not p.is_symlink()]
            found.update({p.name: p.resolve() for p in inside})
            selected.extend([inside[-1].name] if inside else [])
        else:
            raise AnalysisError(f"{path}: not a run directory or a folder of runs")
    if not found:
        raise AnalysisError(f"no run directories (with {MANIFEST}) in {', '.join(map(str, paths))}")
    return found, list(dict.fromkeys(selected))


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


class Explorer:
    """Widgets to pick runs, baseline, candidate, metric and tag, showing the live paired comparison,
    its forest plot, the flipped tasks and the transcript of a chosen episode.

    Example::

        explorer = Explorer(["runs/a", "runs/b"])
        explorer.candidate.value = "with_skill"
        explorer.comparison[["metric", "diff", "verdict"]]
    """

    def __init__(self, runs: str | Path | Sequence[str | Path], n_resamples: int = N_RESAMPLES) -> None:
        self.run_paths, selected = discover_runs([runs] if isinstance(runs, str | Path) else runs)
        self.n_resamples = n_resamples
        self.runs = w.SelectMultiple(options=list(self.run_paths), value=selected, description="runs")
        self.baseline = w.Dropdown(description="baseline")
        self.candidate = w.Dropdown(description="candidate")
        self.metric = w.Dropdown(
            options=[ALL_METRICS, *REPORT_METRICS], value=ALL_METRICS, description="metric"
        )
        self.tag = w.Dropdown(options=[ALL_TAGS], value=ALL_TAGS, description="tag")
        self.episode = w.Dropdown(description="episode", layout=w.Layout(width="70%"))
        self.status = w.HTML()
        self.views = {name: w.Output() for name in ("table", "plot", "flips", "transcript")}
        self.episodes = pd.DataFrame()
        self.comparison = pd.DataFrame()
        self.flips = pd.DataFrame()
        self.transcript = ""
        self.notes: list[str] = []
        self.error: str | None = None
        self._quiet = False
        self.widget = self.layout()
        self.runs.observe(lambda _: self.load(), names="value")
        for choice in (self.baseline, self.candidate, self.metric, self.tag):
            choice.observe(lambda _: self.refresh(), names="value")
        self.episode.observe(lambda _: self.show_transcript(), names="value")
        self.load()

    def layout(self) -> w.VBox:
        """The whole explorer: pickers, then the comparison, the flips and the transcript."""
        pickers = w.HBox([self.runs, w.VBox([self.baseline, self.candidate, self.metric, self.tag])])
        return w.VBox(
            [
                pickers,
                self.status,
                w.HTML("<h3>Comparison (candidate − baseline)</h3>"),
                self.views["table"],
                self.views["plot"],
                w.HTML("<h3>Tasks that flipped (baseline → candidate)</h3>"),
                self.views["flips"],
                w.HTML("<h3>Transcript</h3>"),
                self.episode,
                self.views["transcript"],
            ]
        )

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)

    def load(self) -> None:
        """Read the selected runs and reset the variant and tag choices, then refresh."""
        paths = [self.run_paths[name] for name in self.runs.value]
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            self.episodes = (
                load_runs(paths).episodes if paths else pd.DataFrame(columns=["variant_id", "tags"])
            )
        self.notes = [str(c.message) for c in caught]
        variants = list(dict.fromkeys(str(v) for v in self.episodes["variant_id"]))
        tags = sorted({tag for tags in self.episodes["tags"] for tag in tags})
        base: str | None
        cand: str | None
        try:
            base, cand = variant_pair(
                self.episodes, self.kept(self.baseline, variants), self.kept(self.candidate, variants)
            )
        except ReportError:
            base = cand = variants[0] if variants else None
        self._quiet = True
        try:
            self.baseline.options = self.candidate.options = variants
            self.baseline.value, self.candidate.value = base, cand
            self.tag.options = [ALL_TAGS, *tags]
            self.tag.value = self.kept(self.tag, tags) or ALL_TAGS
        finally:
            self._quiet = False
        self.refresh()

    @staticmethod
    def kept(choice: w.Dropdown, options: list[str]) -> str:
        """The current value of ``choice`` when it is still among ``options``, else ``""``."""
        return str(choice.value) if choice.value in options else ""

    def chosen_episodes(self) -> pd.DataFrame:
        """The loaded episodes, narrowed to the chosen tag."""
        if self.tag.value == ALL_TAGS or self.episodes.empty:
            return self.episodes
        return self.episodes[self.episodes["tags"].map(lambda tags: self.tag.value in tags)]

    def refresh(self) -> None:
        """Recompute the comparison and the flips for the current choices, then redraw."""
        if self._quiet:
            return
        self.error, self.comparison, self.flips = None, pd.DataFrame(), pd.DataFrame()
        chosen = self.chosen_episodes()
        base, cand = self.baseline.value, self.candidate.value
        metrics = list(REPORT_METRICS) if self.metric.value == ALL_METRICS else [self.metric.value]
        try:
            if chosen.empty or base is None:
                raise AnalysisError("no episodes: pick at least one run (and a tag that has episodes)")
            rows = [compare(chosen, cand, base, m, n_resamples=self.n_resamples) for m in metrics]
            self.comparison = comparisons_frame(rows)
            self.flips = flips(chosen, base, cand)
        except (AnalysisError, ValueError) as exc:  # ValueError: scipy refuses some tiny samples
            self.error = f"{type(exc).__name__}: {exc}"
        self.update_episodes(chosen)
        self.render()

    def update_episodes(self, chosen: pd.DataFrame) -> None:
        """Offer the two variants' episodes, those of flipped tasks first, and show the chosen one."""
        pair = (
            chosen[chosen["variant_id"].isin([self.baseline.value, self.candidate.value])]
            if len(chosen)
            else chosen
        )
        flipped = set(self.flips["task_id"]) if len(self.flips) else set()
        if len(pair):
            pair = pair.assign(flipped=~pair["task_id"].isin(flipped)).sort_values(["flipped", "episode_id"])
        options = [(f"{r.episode_id} ({r.outcome})", r.path) for r in pair.itertuples()] if len(pair) else []
        current = self.episode.value
        self._quiet = True
        try:
            self.episode.options = options
            paths = [path for _, path in options]
            self.episode.value = current if current in paths else (paths[0] if paths else None)
        finally:
            self._quiet = False
        self.show_transcript()

    def show_transcript(self) -> None:
        """Read the chosen episode's trajectory into ``transcript`` and show it."""
        if self._quiet:
            return
        path = self.episode.value
        self.transcript = transcript_text(Path(path)) if path else ""
        self.views["transcript"].outputs = (html_output(f"<pre>{html.escape(self.transcript)}</pre>"),)

    def render(self) -> None:
        """Fill the status line, the comparison table, the forest plot and the flips table."""
        notes = "".join(f"<div>Note: {html.escape(n)}</div>" for n in self.notes)
        error = f'<div style="color:#b00">{html.escape(self.error)}</div>' if self.error else ""
        self.status.value = error + notes
        if self.comparison.empty:
            for name in ("table", "plot", "flips"):
                self.views[name].outputs = ()
            return
        base, cand = str(self.baseline.value), str(self.candidate.value)
        table = comparison_table(self.comparison, base, cand)
        self.views["table"].outputs = (html_output(table.to_html(index=False, classes=TABLE_CLASS)),)
        self.views["plot"].outputs = (figure_output(self.forest_figure()),)
        flipped = flips_table(self.flips, base, cand)
        self.views["flips"].outputs = (
            html_output(flipped.to_html(index=False, escape=False, classes=FLIPS_CLASS)),
        )

    def forest_figure(self) -> Figure:
        """One forest plot per metric (each on its own scale)."""
        figure = Figure(figsize=(8, 1.1 * len(self.comparison) + 0.4), layout="constrained")
        axes = figure.subplots(len(self.comparison), 1, squeeze=False)[:, 0]
        for ax, index in zip(axes, self.comparison.index, strict=True):
            forest_plot(self.comparison.loc[[index]], ax)
            ax.set_xlabel("")
        return figure
