"""Interactive exploration in JupyterLab or Voila: pick runs, two variants, a metric and a tag.

Everything shown comes from the declared comparison (``verdicts``), as in the reports: the same
headline tasks by default, the same tests, intervals and verdicts. The handlers keep what they
computed as attributes (``verdicts``, ``comparison``, ``summary``, ``flips``, ``transcript``,
``error``, ``note``), so the logic is testable without a kernel: set a widget's ``.value`` and read
the attribute. Views are filled by assigning ``Output.outputs`` directly, which works in a kernel and
is harmless outside one. Text from the runs (labels, variant and task names, transcripts) is escaped
before it is shown.

Two runs can be compared as ``run --baseline`` compares them: pick one run and a ``baseline run``,
and each variant of the run is compared with the baseline run's variant of the same id, on the tasks
both ran with the same content (``coder_eval.analysis.answer.baseline_run``, the same verdicts).

Example (a notebook cell)::

    from coder_eval.analysis.views.widgets import Explorer
    Explorer("runs")          # every run under runs/ can be picked; the newest is selected
"""

from __future__ import annotations

import html
import warnings
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import ipywidgets as w
import pandas as pd

from coder_eval.analysis.answer.baseline_run import BASELINE, CANDIDATE, Regression
from coder_eval.analysis.answer.engine import REPORT_METRICS, Declaration, Verdicts, pick_variants, verdicts
from coder_eval.analysis.answer.wording import invalid_text, verdict_rows
from coder_eval.analysis.frames.load import Runs, load_runs
from coder_eval.analysis.stats.flips import flips
from coder_eval.analysis.stats.intervals import N_RESAMPLES
from coder_eval.analysis.stats.summary import summarize
from coder_eval.analysis.views.explorer import (
    FigureDrawer,
    Outputs,
    RunPair,
    amounts_figure,
    confusion_views,
    figure_output,
    figure_views,
    forest_figure,
    html_output,
    in_kernel,
    summary_html,
)
from coder_eval.analysis.views.notebook import flips_table, html_table
from coder_eval.analysis.views.sequential_report import sequence_views
from coder_eval.errors import AnalysisError, CoderEvalError
from coder_eval.manifest import read_manifest
from coder_eval.run_dir import MANIFEST, RunManifest
from coder_eval.transcript import transcript_text

NO_BASELINE_RUN = "(none: compare variants)"
HEADLINE = "(headline tasks)"
ALL_TAGS = "(all tasks)"
ALL_METRICS = "(all metrics)"
TABLE_CLASS = "explorer-comparison"
SUMMARY_CLASS = "explorer-summary"
FLIPS_CLASS = "explorer-flips"


def empty_runs() -> Runs:
    """No runs: empty frames with the columns the pickers read."""
    return Runs(pd.DataFrame(columns=["variant_id", "tags"]), pd.DataFrame(), pd.DataFrame(), pd.DataFrame())


def discover_runs(paths: Sequence[str | Path]) -> tuple[dict[str, Path], list[str]]:
    """Run directories by name, and the ones to select first.

    A run directory stands for itself (all given ones are selected); any other folder offers the
    runs inside it, and its newest is selected: the latest ``created_at`` in run.json (a run named
    ``regraded`` does not hide a newer one), the run id breaking a tie.
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
            selected.extend([max(inside, key=created).name] if inside else [])
        else:
            raise AnalysisError(f"{path}: not a run directory or a folder of runs")
    if not found:
        raise AnalysisError(f"no run directories (with {MANIFEST}) in {', '.join(map(str, paths))}")
    return found, list(dict.fromkeys(selected))


def created(path: Path) -> tuple[str, str]:
    """When a run was made (its run.json's ``created_at`` as ISO text, empty when unreadable), and its
    name: what orders runs from oldest to newest."""
    try:
        return read_manifest(path).created_at.isoformat(), path.name
    except (CoderEvalError, OSError, ValueError):
        return "", path.name


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

    def __init__(
        self,
        runs: str | Path | Sequence[str | Path],
        n_resamples: int = N_RESAMPLES,
        figures_later: bool | None = None,
    ) -> None:
        self.run_paths, selected = discover_runs([runs] if isinstance(runs, str | Path) else runs)
        self.n_resamples = n_resamples
        self.figures = FigureDrawer(in_kernel() if figures_later is None else figures_later)
        """Draws the figures after the tables: in a thread when ``figures_later`` (default: in a
        kernel); ``figures.wait()`` waits for them."""
        self.runs = w.SelectMultiple(
            options=[(run_label(path), name) for name, path in self.run_paths.items()],
            value=selected,
            description="runs",
            layout=w.Layout(width="45%"),
        )
        self.against = w.Dropdown(
            options=[
                (NO_BASELINE_RUN, ""),
                *((run_label(path), name) for name, path in self.run_paths.items()),
            ],
            value="",
            description="baseline run",
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
        self.loaded = empty_runs()
        self.names: dict[str, str] = {}
        self.shown = self.loaded
        """What the views show: the loaded runs, or (a baseline run picked) the arm's two sides."""
        self.pair: RunPair | None = None
        self.regression: Regression | None = None
        self.load_error: str | None = None
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
        self.against.observe(lambda _: self.load(), names="value")
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
        choices = w.VBox([self.against, self.baseline, self.candidate, self.metric, self.tag])
        pickers = w.HBox([self.runs, choices])
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
        """Read the selected runs (or the run and its baseline run) and reset the variant and tag
        choices, then refresh."""
        self.pair, self.load_error = None, None
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                self.loaded = self._read()
            except (AnalysisError, CoderEvalError) as exc:
                self.load_error, self.loaded = f"{type(exc).__name__}: {exc}", empty_runs()
        self.notes = [str(c.message) for c in caught]
        variants = list(dict.fromkeys(str(v) for v in self.episodes["variant_id"]))
        tags = sorted({tag for tags in self.episodes["tags"] for tag in tags})
        self._quiet = True
        try:
            self._choose_variants(variants)
            self.tag.options = [HEADLINE, ALL_TAGS, *tags]
            self.tag.value = self.kept(self.tag, tags) or HEADLINE
        finally:
            self._quiet = False
        self.refresh()

    def _read(self) -> Runs:
        """The selected runs' frames; with a baseline run, the one selected run's (and ``pair``)."""
        names = list(self.runs.value)
        if not self.against.value:
            return load_runs([self.run_paths[n] for n in names]) if names else empty_runs()
        if len(names) != 1:
            raise AnalysisError(
                f"pick one run to compare with the baseline run {self.against.value} (got {len(names)})"
            )
        self.pair = RunPair.load(self.run_paths[names[0]], self.run_paths[str(self.against.value)])
        return self.pair.candidate

    def _choose_variants(self, variants: list[str]) -> None:
        """The baseline and candidate choices: two variants of the loaded runs, or (with a baseline
        run) a variant of the run and its counterpart in the baseline run."""
        self.baseline.disabled = self.pair is not None
        if self.pair is None:
            base, cand, _ = pick_variants(
                self.episodes, self.kept(self.baseline, variants), self.kept(self.candidate, variants)
            )
            self.baseline.options = self.candidate.options = variants
            self.baseline.value, self.candidate.value = base or None, cand or None
            return
        theirs = list(dict.fromkeys(str(v) for v in self.pair.baseline.episodes["variant_id"]))
        paired = [v for v in variants if v in theirs] or (
            variants if len(variants) == len(theirs) == 1 else []
        )
        self.candidate.options = variants
        self.candidate.value = self.kept(self.candidate, paired) or next(iter(paired or variants), None)
        self.baseline.options = theirs
        self._show_counterpart()

    def _show_counterpart(self) -> None:
        """With a baseline run: the baseline choice shows the variant the candidate is paired with."""
        options, chosen = list(self.baseline.options), self.candidate.value
        single = len(options) == 1 and len(self.candidate.options) == 1
        self.baseline.value = chosen if chosen in options else (options[0] if single else None)

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
        self.error, self.note, self.verdicts, self.regression = None, "", None, None
        self.comparison, self.summary, self.flips = pd.DataFrame(), pd.DataFrame(), pd.DataFrame()
        self.shown = self.loaded
        try:
            if self.load_error:
                raise AnalysisError(self.load_error)
            if self.episodes.empty:
                raise AnalysisError("no episodes: pick at least one run")
            self.verdicts = self._against_baseline_run() if self.pair else self._between_variants()
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

    def _between_variants(self) -> Verdicts:
        """The declared comparison of two variants of the loaded runs."""
        if (
            self.baseline.value is not None
            and self.baseline.value == self.candidate.value
            and (self.episodes["variant_id"].nunique() > 1)
        ):
            raise AnalysisError(
                f"a comparison needs two different variants (got {self.baseline.value!r} twice)"
            )
        return verdicts(self.loaded, self.declaration())

    def _against_baseline_run(self) -> Verdicts:
        """The chosen variant of the run against its counterpart in the baseline run, as ``run
        --baseline`` compares them; the views then show the arm's two sides."""
        assert self.pair is not None
        self._quiet = True
        try:
            self._show_counterpart()
        finally:
            self._quiet = False
        self.regression = self.pair.regression(replace(self.declaration(), baseline="", candidate=""))
        arm = next((a for a in self.regression.arms if a.variant_id == self.candidate.value), None)
        if arm is None:
            wanted = self.candidate.value
            raise AnalysisError(
                f"the baseline run {self.pair.baseline_id} has no variant to pair {wanted!r} with"
            )
        self.shown = self.pair.sides(arm, self.regression.pairing.paired)
        self.names = self.pair.names(arm)
        return arm.verdicts

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
        """The chosen tasks' episodes of the two variants (with a baseline run: of the two sides)."""
        chosen = self.verdicts.selection.episodes if self.verdicts else self.episodes
        if chosen.empty:
            return chosen
        sides = [BASELINE, CANDIDATE] if self.pair else [self.baseline.value, self.candidate.value]
        return chosen[chosen["variant_id"].isin(sides)]

    def update_episodes(self) -> None:
        """Offer the two variants' episodes, those of flipped tasks first, and show the chosen one."""
        pair = self.chosen_pair()
        flipped = set(self.flips["task_id"]) if len(self.flips) else set()
        if len(pair):
            pair = pair.assign(flipped=~pair["task_id"].isin(flipped)).sort_values(["flipped", "episode_id"])
        columns = ("variant_id", "episode_id", "outcome", "path")
        rows = zip(*(pair[c] for c in columns), strict=True) if len(pair) else iter(())
        sided = self.pair is not None  # two runs: the same episode id on both sides
        options = [(f"{v}: " * sided + f"{e} ({o})", path) for v, e, o, path in rows]
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
        """Fill the status line and every view from what ``refresh`` computed: the tables at once,
        then the figures (``figures``: in a thread in a kernel, so the tables show first)."""
        self.status.value = self.status_html()
        self.figures.cancel()  # an earlier choice's figures, still being drawn, stay out of the views
        for name in self.views:
            if name != "transcript":
                self.views[name].outputs = ()
        runs = [self.run_paths[run] for run in self.runs.value]
        jobs: list[tuple[str, Callable[[], Outputs]]] = []
        if self.verdicts is not None and self.verdicts.available:
            table = verdict_rows(self.verdicts.comparisons)
            table.columns = [self.shown_column(str(c)) for c in table.columns]
            self.views["table"].outputs = (html_output(table.to_html(index=False, classes=TABLE_CLASS)),)
            base, cand = (self.shown_name(v) for v in (self.verdicts.baseline, self.verdicts.candidate))
            links = [f"trajectories {base}", f"trajectories {cand}"]
            flips = flips_table(self.flips, base, cand)
            self.views["flips"].outputs = (
                html_output(html_table(flips, links, index=False, classes=FLIPS_CLASS)),
            )
            comparison = self.comparison
            jobs.append(("plot", lambda: (figure_output(forest_figure(comparison)),)))
        jobs.append(("sequence", lambda: sequence_views(runs)))
        if not self.summary.empty:
            summary = self.summary.assign(variant_id=self.summary["variant_id"].map(self.shown_name))
            self.views["summary"].outputs = (html_output(summary_html(summary, SUMMARY_CLASS)),)
            sides = [BASELINE, CANDIDATE] if self.pair else [self.baseline.value, self.candidate.value]
            pair = list(dict.fromkeys(str(v) for v in sides if v is not None))
            chosen = self.verdicts.selection.episodes if self.verdicts else self.episodes
            criteria, n = self.shown.criteria, self.n_resamples
            jobs.append(("amounts", lambda: figure_views(amounts_figure(chosen))))
            jobs.append(("confusion", lambda: confusion_views(criteria, pair, n)))
        self.figures.draw(self.views, jobs)

    def shown_name(self, variant: str) -> str:
        """How a variant is named on screen: itself, or (a baseline run picked) ``<run id> · <variant>``."""
        return self.names.get(variant, variant) if self.pair else variant

    def shown_column(self, column: str) -> str:
        """A comparison column named after a side (``baseline baseline``) with the side's shown name."""
        role, _, variant = column.partition(" ")
        return f"{role} {self.shown_name(variant)}" if role in (BASELINE, CANDIDATE) else column

    def status_html(self) -> str:
        """The error, why there is no comparison (or which tasks it covers), and the load notes."""
        lines = [f'<div style="color:#b00">{html.escape(self.error)}</div>'] if self.error else []
        if self.regression is not None and self.pair is not None:
            called = "called worse" if self.regression.regressed else "no regression called"
            said = f"Run {self.pair.candidate_id} against the baseline run {self.pair.baseline_id} ({called})"
            pairing = html.escape(self.regression.pairing.description)
            lines.append(f"<div>{html.escape(said)}; pairing: {pairing}.</div>")
        if self.note:
            why = html.escape(self.note)
            lines.append(f"<div><b>No comparison:</b> {why}. The per-variant summary is below.</div>")
        elif self.verdicts is not None:
            lines.append(f"<div>Tasks: {html.escape(self.verdicts.selection.description)}.</div>")
            if self.verdicts.primary is not None and invalid_text(self.verdicts.primary):
                lines.append(f"<div><b>Headline:</b> {html.escape(self.verdicts.line())}.</div>")
        return "".join(lines + [f"<div>Note: {html.escape(n)}</div>" for n in self.notes])
