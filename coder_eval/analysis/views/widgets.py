"""Interactive exploration in JupyterLab or Voila: pick runs, two variants, a metric and a tag.

Everything shown comes from the declared comparison (``verdicts``), as in the reports: the same
headline tasks by default, the same tests, intervals and verdicts. The handlers keep what they
computed as attributes (``verdicts``, ``comparison``, ``summary``, ``flips``, ``transcript``,
``error``, ``note``), so the logic is testable without a kernel: set a widget's ``.value`` and read
the attribute. Views are filled by assigning ``Output.outputs`` directly, which works in a kernel and
is harmless outside one. Text from the runs (labels, variant and task names, transcripts) is escaped
before it is shown.

Example (a notebook cell)::

    from coder_eval.analysis.views.widgets import Explorer
    Explorer("runs")          # every run under runs/ can be picked; the newest is selected
"""

from __future__ import annotations

import html
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import ipywidgets as w
import pandas as pd

from coder_eval.analysis.answer.engine import REPORT_METRICS, Declaration, Verdicts, pick_variants, verdicts
from coder_eval.analysis.answer.wording import invalid_text, verdict_rows
from coder_eval.analysis.frames.load import Runs, load_runs
from coder_eval.analysis.stats.flips import flips
from coder_eval.analysis.stats.intervals import N_RESAMPLES
from coder_eval.analysis.stats.summary import summarize
from coder_eval.analysis.views.explorer import (
    amounts_figure,
    confusion_views,
    figure_output,
    figure_views,
    forest_figure,
    html_output,
)
from coder_eval.analysis.views.notebook import flips_table, html_table
from coder_eval.analysis.views.sequential_report import sequence_views
from coder_eval.errors import AnalysisError
from coder_eval.run_dir import MANIFEST, RunManifest
from coder_eval.transcript import transcript_text

HEADLINE = "(headline tasks)"
ALL_TAGS = "(all tasks)"
ALL_METRICS = "(all metrics)"
TABLE_CLASS = "explorer-comparison"
SUMMARY_CLASS = "explorer-summary"
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


def run_label(path: Path) -> str:
    """``"<run_id> — <experiment_id>"`` for the run picker (the run id alone when run.json is unreadable)."""
    try:
        manifest = RunManifest.model_validate_json((path / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return path.name
    return f"{path.name} — {manifest.experiment_id}"


class Explorer:
    """Widgets to pick runs, baseline, candidate, metric and tasks, showing the declared comparison,
    its forest plot, a per-variant summary, tokens and cost, the confusion matrix of labelled
    criteria, the flipped tasks and the transcript of a chosen episode.

    Example::

        explorer = Explorer(["runs/a", "runs/b"])
        explorer.candidate.value = "with_skill"
        explorer.comparison[["metric", "diff", "verdict"]]
    """

    def __init__(self, runs: str | Path | Sequence[str | Path], n_resamples: int = N_RESAMPLES) -> None:
        self.run_paths, selected = discover_runs([runs] if isinstance(runs, str | Path) else runs)
        self.n_resamples = n_resamples
        self.runs = w.SelectMultiple(
            options=[(run_label(path), name) for name, path in self.run_paths.items()],
            value=selected,
            description="runs",
            layout=w.Layout(width="45%"),
        )
        self.baseline = w.Dropdown(description="baseline")
        self.candidate = w.Dropdown(description="candidate")
        self.metric = w.Dropdown(
            options=[ALL_METRICS, *REPORT_METRICS], value=ALL_METRICS, description="metric"
        )
        self.tag = w.Dropdown(options=[HEADLINE, ALL_TAGS], value=HEADLINE, description="tasks")
        self.episode = w.Dropdown(description="episode", layout=w.Layout(width="70%"))
        self.status = w.HTML()
        names = ("table", "plot", "sequence", "summary", "amounts", "confusion", "flips", "transcript")
        self.views = {name: w.Output() for name in names}
        self.loaded = Runs(
            pd.DataFrame(columns=["variant_id", "tags"]), pd.DataFrame(), pd.DataFrame(), pd.DataFrame()
        )
        self.verdicts: Verdicts | None = None
        self.comparison = pd.DataFrame()
        self.summary = pd.DataFrame()
        self.flips = pd.DataFrame()
        self.transcript = ""
        self.notes: list[str] = []
        self.error: str | None = None
        self.note = ""
        self._quiet = False
        self.widget = self.layout()
        self.runs.observe(lambda _: self.load(), names="value")
        for choice in (self.baseline, self.candidate, self.metric, self.tag):
            choice.observe(lambda _: self.refresh(), names="value")
        self.episode.observe(lambda _: self.show_transcript(), names="value")
        self.load()

    @property
    def episodes(self) -> pd.DataFrame:
        """Every loaded episode."""
        return self.loaded.episodes

    def layout(self) -> w.VBox:
        """The whole explorer: pickers, then the comparison, summary, plots, flips and transcript."""
        pickers = w.HBox([self.runs, w.VBox([self.baseline, self.candidate, self.metric, self.tag])])
        return w.VBox(
            [
                pickers,
                self.status,
                w.HTML("<h3>Comparison (candidate against baseline)</h3>"),
                self.views["table"],
                self.views["plot"],
                w.HTML("<h3>Stopping at the answer</h3>"),
                self.views["sequence"],
                w.HTML("<h3>Per variant</h3>"),
                self.views["summary"],
                w.HTML("<h3>Tokens and cost</h3>"),
                self.views["amounts"],
                w.HTML("<h3>Classification</h3>"),
                self.views["confusion"],
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
            self.loaded = (
                load_runs(paths)
                if paths
                else Runs(
                    pd.DataFrame(columns=["variant_id", "tags"]),
                    pd.DataFrame(),
                    pd.DataFrame(),
                    pd.DataFrame(),
                )
            )
        self.notes = [str(c.message) for c in caught]
        variants = list(dict.fromkeys(str(v) for v in self.episodes["variant_id"]))
        tags = sorted({tag for tags in self.episodes["tags"] for tag in tags})
        base, cand, _ = pick_variants(
            self.episodes, self.kept(self.baseline, variants), self.kept(self.candidate, variants)
        )
        self._quiet = True
        try:
            self.baseline.options = self.candidate.options = variants
            self.baseline.value = base or None
            self.candidate.value = cand or None
            self.tag.options = [HEADLINE, ALL_TAGS, *tags]
            self.tag.value = self.kept(self.tag, tags) or HEADLINE
        finally:
            self._quiet = False
        self.refresh()

    @staticmethod
    def kept(choice: w.Dropdown, options: list[str]) -> str:
        """The current value of ``choice`` when it is still among ``options``, else ``""``."""
        return str(choice.value) if choice.value in options else ""

    def declaration(self) -> Declaration:
        """The comparison the pickers declare."""
        metrics = REPORT_METRICS if self.metric.value == ALL_METRICS else (str(self.metric.value),)
        tasks: dict[str, Any] = {}
        if self.tag.value == ALL_TAGS:
            tasks = {"tags": (), "exclude_tags": (), "classification": True}
        elif self.tag.value != HEADLINE:
            tasks = {"tags": (str(self.tag.value),), "exclude_tags": ()}
        return Declaration(
            str(self.baseline.value or ""), str(self.candidate.value or ""), metrics,
            n_resamples=self.n_resamples, **tasks,
        )  # fmt: skip

    def refresh(self) -> None:
        """Recompute the declared comparison and the flips for the current choices, then redraw."""
        if self._quiet:
            return
        self.error, self.note, self.verdicts = None, "", None
        self.comparison, self.summary, self.flips = pd.DataFrame(), pd.DataFrame(), pd.DataFrame()
        try:
            if self.episodes.empty:
                raise AnalysisError("no episodes: pick at least one run")
            if (
                self.baseline.value is not None
                and self.baseline.value == self.candidate.value
                and (self.episodes["variant_id"].nunique() > 1)
            ):
                raise AnalysisError(
                    f"a comparison needs two different variants (got {self.baseline.value!r} twice)"
                )
            self.verdicts = verdicts(self.loaded, self.declaration())
            self.note = self.verdicts.note
            self.summary = self.variant_summary(self.verdicts.selection.episodes)
            if self.verdicts.available:
                self.comparison = self.verdicts.frame()
                self.flips = flips(
                    self.verdicts.selection.episodes, self.verdicts.baseline, self.verdicts.candidate
                )
        except (AnalysisError, ValueError) as exc:  # ValueError: scipy refuses some tiny samples
            self.error = f"{type(exc).__name__}: {exc}"
        self.update_episodes()
        self.render()

    def variant_summary(self, episodes: pd.DataFrame) -> pd.DataFrame:
        """Per variant and metric, the estimate and interval of ``summarize`` on the chosen tasks."""
        if episodes.empty:
            return pd.DataFrame()
        metrics = [str(c) for c in REPORT_METRICS if c in episodes.columns or c == "total_tokens"]
        parts = [summarize(episodes, m, n_resamples=self.n_resamples).assign(metric=m) for m in metrics]
        return pd.concat(parts, ignore_index=True)[
            ["metric", "variant_id", "n_tasks", "mean", "ci_low", "ci_high", "method"]
        ]

    def chosen_pair(self) -> pd.DataFrame:
        """The chosen tasks' episodes of the two variants."""
        chosen = self.verdicts.selection.episodes if self.verdicts else self.episodes
        if chosen.empty:
            return chosen
        return chosen[chosen["variant_id"].isin([self.baseline.value, self.candidate.value])]

    def update_episodes(self) -> None:
        """Offer the two variants' episodes, those of flipped tasks first, and show the chosen one."""
        pair = self.chosen_pair()
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
        """Fill the status line and every view from what ``refresh`` computed."""
        self.status.value = self.status_html()
        for name in ("table", "plot", "summary", "amounts", "confusion", "flips"):
            self.views[name].outputs = ()
        self.views["sequence"].outputs = sequence_views(self.run_paths[run] for run in self.runs.value)
        chosen = self.verdicts.selection.episodes if self.verdicts else self.episodes
        if not self.summary.empty:
            summary = html_output(self.summary.to_html(index=False, classes=SUMMARY_CLASS))
            pair = list(
                dict.fromkeys(v for v in (self.baseline.value, self.candidate.value) if v is not None)
            )
            self.views["summary"].outputs = (summary,)
            self.views["amounts"].outputs = figure_views(amounts_figure(chosen))
            self.views["confusion"].outputs = confusion_views(self.loaded.criteria, pair, self.n_resamples)
        if self.verdicts is None or not self.verdicts.available:
            return
        table = verdict_rows(self.verdicts.comparisons)
        self.views["table"].outputs = (html_output(table.to_html(index=False, classes=TABLE_CLASS)),)
        self.views["plot"].outputs = (figure_output(forest_figure(self.comparison)),)
        base, cand = self.verdicts.baseline, self.verdicts.candidate
        links = [f"trajectories {base}", f"trajectories {cand}"]
        flipped = html_table(flips_table(self.flips, base, cand), links, index=False, classes=FLIPS_CLASS)
        self.views["flips"].outputs = (html_output(flipped),)

    def status_html(self) -> str:
        """The error, why there is no comparison (or which tasks it covers), and the load notes."""
        lines = [f'<div style="color:#b00">{html.escape(self.error)}</div>'] if self.error else []
        if self.note:
            why = html.escape(self.note)
            lines.append(f"<div><b>No comparison:</b> {why}. The per-variant summary is below.</div>")
        elif self.verdicts is not None:
            lines.append(f"<div>Tasks: {html.escape(self.verdicts.selection.description)}.</div>")
            if self.verdicts.primary is not None and invalid_text(self.verdicts.primary):
                lines.append(f"<div><b>Headline:</b> {html.escape(self.verdicts.line())}.</div>")
        return "".join(lines + [f"<div>Note: {html.escape(n)}</div>" for n in self.notes])
