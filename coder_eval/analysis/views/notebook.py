"""What the report notebooks and the explorer call: loading runs, the scripted-model banner, picking the
variant pair, links to transcripts, readable tables, the summary file.

The templates in ``notebooks/`` stay thin: a parameters cell, then calls into ``coder_eval.analysis``
and these helpers.

Example (a template cell)::

    runs, notes = load_report_runs(run_dirs)
    show_scripted_banner(runs.episodes)
    baseline, candidate = variant_pair(runs.episodes, baseline, candidate)
    readable(summarize(runs.episodes), why={"mean": "no valid episode"})
    write_summary(summary_path, comparisons=comparisons_frame([...]))
"""

from __future__ import annotations

import html
import importlib
import json
import math
import os
import urllib.parse
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, is_dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from coder_eval.analysis.answer.engine import (
    REPORT_METRICS as REPORT_METRICS,  # the metrics every report shows
)
from coder_eval.analysis.answer.engine import pick_variants
from coder_eval.analysis.answer.wording import metric_value
from coder_eval.analysis.frames.load import Runs, load_runs
from coder_eval.errors import ManifestError, ReportError
from coder_eval.manifest import read_manifest


def jsonable(value: Any) -> Any:
    """Frames, series, dataclasses and numpy scalars as plain JSON values; NaN, ±inf and NA become None.

    Example: ``jsonable(pd.DataFrame({"x": [1.0, float("nan")]}))`` -> ``[{"x": 1.0}, {"x": None}]``
    """
    if isinstance(value, pd.DataFrame):
        return jsonable(value.to_dict("records"))
    if isinstance(value, pd.Series):
        return jsonable(value.to_dict())
    if is_dataclass(value) and not isinstance(value, type):
        return jsonable(asdict(value))
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set):
        return [jsonable(v) for v in value]
    if hasattr(value, "item") and callable(value.item):  # numpy scalars
        value = value.item()
    if value is pd.NA or (isinstance(value, float) and not math.isfinite(value)):
        return None
    return value


def write_summary(path: str, **sections: Any) -> None:
    """Write a notebook's headline numbers as JSON (``path == ""`` writes nothing).

    Example (last cell of a template): ``write_summary(summary_path, pass_rate=summarize(episodes))``
    """
    if path:
        text = json.dumps(jsonable(sections), indent=2, sort_keys=True, allow_nan=False)
        Path(path).write_text(text + "\n", encoding="utf-8")


def load_report_runs(run_dirs: str) -> tuple[Runs, list[str]]:
    """``load_runs`` on comma-separated run directories; its warnings are returned as text, not printed,
    and so is a run's stop at its cost cap (:func:`budget_stops`: the figures cover a partial run).

    Example: ``runs, notes = load_report_runs("runs/a,runs/b")``
    """
    paths = [p.strip() for p in run_dirs.split(",") if p.strip()]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        runs = load_runs(paths)
    stops = [
        f"run {s.run_id} was stopped by its cost cap (${s.spent_usd:.4g} spent of ${s.max_cost_usd:g}; "
        f"{s.not_started} episodes not started): every figure covers the episodes that ran, and "
        "`coder-eval run --resume` with a larger --max-cost-usd finishes it"
        for s in budget_stops(paths)
    ]
    return runs, [str(w.message) for w in caught] + stops


@dataclass(frozen=True)
class BudgetStop:
    """A run that ``--max-cost-usd`` stopped (exit code 3): what it spent of its cap, what never started
    (a record in ``summary.json``: ``budget_stopped``)."""

    run_id: str
    max_cost_usd: float
    spent_usd: float
    not_started: int


def budget_stops(run_dirs: Sequence[str | Path]) -> list[BudgetStop]:
    """The runs among ``run_dirs`` that their cost cap stopped, from their manifests (a folder without
    a readable ``run.json`` is skipped).

    Example: ``budget_stops(["runs/latest"])`` -> ``[BudgetStop("r1", 1.5, 2.0, 2)]``
    """
    stops = []
    for folder in (Path(str(d).strip()) for d in run_dirs):
        try:
            manifest = read_manifest(folder)
        except ManifestError:
            continue
        budget = manifest.budget
        if manifest.status == "budget_stopped" and budget is not None:
            stops.append(
                BudgetStop(manifest.run_id, budget.max_cost_usd, budget.spent_usd, budget.not_started)
            )
    return stops


def variant_pair(episodes: pd.DataFrame, baseline: str = "", candidate: str = "") -> tuple[str, str]:
    """(baseline, candidate) by ``verdicts.pick_variants``; ReportError when there is no pair.

    Example: ``variant_pair(runs.episodes)`` -> ``("baseline", "with_skill")``
    """
    base, cand, why = pick_variants(episodes, baseline, candidate)
    if why:
        raise ReportError(f"a comparison needs two variants; {why}")
    return base, cand


TRANSCRIPT_URL_ENV = "CODER_EVAL_TRANSCRIPT_URL"
"""Set by the viewer's server (``coder-eval view``, or the Jupyter server extension) for its kernels:
the URL of the page that shows a trajectory as a readable transcript (``?path=<file>``)."""


def trajectory_links(paths: Sequence[str], base: Path | None = None) -> str:
    """HTML links to trajectories: to the viewer's transcript page when a viewer serves this kernel,
    else to the files, relative to ``base`` (the report's folder; default: cwd).

    Example: ``trajectory_links(["/r/run/episodes/t--a--r0.jsonl"])`` -> ``'<a href="...">t--a--r0</a>'``
    """
    page = os.environ.get(TRANSCRIPT_URL_ENV)
    start = base or Path.cwd()
    links = []
    for p in paths:
        if page:
            query = urllib.parse.urlencode({"path": str(Path(p).resolve())})
            href, target = f"{page}?{query}", ' target="_blank"'
        else:
            href, target = Path(os.path.relpath(p, start)).as_posix(), ""
        links.append(f'<a href="{html.escape(href)}"{target}>{html.escape(Path(p).stem)}</a>')
    return " ".join(links)


def html_table(frame: pd.DataFrame, links: Sequence[str] = (), **options: Any) -> str:
    """``frame.to_html`` with every cell escaped but the ``links`` columns, which must hold markup made
    here (``trajectory_links``, which escapes what it links). Text from the runs (an agent's label,
    a task's prompt) is shown as text, never run as markup.

    Example: ``HTML(html_table(wrong, links=["trajectory"], index=False))``
    """
    shown = frame.copy()
    for column in shown.columns:
        if column not in links:
            shown[column] = [html.escape(str(v)) if isinstance(v, str) else v for v in shown[column]]
    index = [html.escape(str(v)) if isinstance(v, str) else v for v in shown.index]
    shown.index = pd.Index(index, name=shown.index.name)
    shown.columns = [html.escape(str(c)) for c in shown.columns]
    return str(shown.to_html(escape=False, **options))


def md_text(text: object) -> str:
    """Text from the runs for a Markdown cell: HTML special characters escaped, so it reads as text.

    Example: ``Markdown(f"Criterion **{md_text(criterion_id)}**")``
    """
    return html.escape(str(text))


def record_note(episodes: pd.DataFrame) -> str | None:
    """How many episodes' records are the agent's own (not checked at a harness point), in words; None
    when every one was checked (or the frame predates the record).

    Example: ``record_note(runs.episodes)`` -> ``"The record of 3 of 10 episodes is the agent's own ..."``.
    """
    if "record_verified" not in episodes or not len(episodes):
        return None
    known = episodes["record_verified"].dropna()
    unverified = int((~known.astype(bool)).sum())
    if not unverified:
        return None
    share = "every episode" if unverified == len(episodes) else f"{unverified} of {len(episodes)} episodes"
    return (
        f"The record of {share} is the agent's own, unverified: their tool calls, usage and cost come "
        "from the agent CLI's stream, not from the model endpoint's record (no harness vantage point on "
        "the model, or a tempdir sandbox, which is no boundary)."
    )


def show_scripted_banner(episodes: pd.DataFrame) -> None:
    """Display, at the top of a report, that its episodes used the scripted model server (if any did),
    and that their record is the agent's own (if any's is: :func:`record_note`).

    Example (first output of every template): ``show_scripted_banner(runs.episodes)``
    """
    display = importlib.import_module("IPython.display")  # untyped

    note = record_note(episodes)
    if note is not None:
        display.display(
            display.HTML(
                '<div class="coder-eval-unverified" style="border-left: 4px solid #b00020; '
                f'background: #fdecee; padding: 0.5em 1em; margin: 0.5em 0"><b>{note}</b></div>'
            )
        )

    scripted = int(episodes["scripted"].fillna(False).astype(bool).sum()) if len(episodes) else 0
    if not scripted:
        return
    share = "" if scripted == len(episodes) else f" ({scripted} of {len(episodes)} episodes)"
    display.display(
        display.HTML(
            '<div class="coder-eval-scripted" style="border-left: 4px solid #d08700; background: #fff7e0;'
            ' padding: 0.5em 1em; margin: 0.5em 0">'
            f"<b>This run used the scripted model{share}.</b> The model was coder_eval's scripted "
            "server replaying scripted turns offline: the numbers below describe the scripted "
            "behaviour and the harness, not a real model.</div>"
        )
    )


INTERVAL_SUFFIXES = ("_low", "_high")


def readable(frame: pd.DataFrame, why: Mapping[str, str] | None = None, digits: int = 3) -> pd.DataFrame:
    """A frame for people: floats to ``digits`` significant digits, ``∞`` for an unbounded interval,
    and ``n/a (why)`` where a number is undefined, never a bare NaN.

    The reason for an empty cell is ``why[column]`` (the first level of a pivoted column); for an
    interval bound, the reason of its estimate when that is empty too, else "one task" when the row
    has fewer than two; else the row's ``note``, or its ``method`` when that explains an empty
    estimate ("no valid episodes", "undefined: nothing resolved"); else ``why["*"]`` or "undefined".
    Example: ``readable(per_label, why={"precision": "label never observed"})``
    """
    reasons = dict(why or {})
    shown = frame.astype(object)
    for position, column in enumerate(frame.columns):
        values = frame.iloc[:, position]
        if not pd.api.types.is_numeric_dtype(values) or pd.api.types.is_bool_dtype(values):
            continue
        name = str(column[0] if isinstance(column, tuple) else column)
        cells = [
            f"n/a ({_reason(frame.iloc[row], name, reasons)})" if pd.isna(value) else _number(value, digits)
            for row, value in enumerate(values)
        ]
        shown.iloc[:, position] = cells
    return shown


def _number(value: Any, digits: int) -> str:
    number = float(value)
    if math.isinf(number):
        return "∞" if number > 0 else "-∞"
    return str(int(number)) if number.is_integer() else f"{number:.{digits}g}"


def _reason(row: pd.Series, column: str, why: dict[str, str]) -> str:
    if column in why:
        return why[column]
    estimate = next((column[: -len(s)] for s in INTERVAL_SUFFIXES if column.endswith(s)), None)
    if estimate:
        estimate = "mean" if estimate == "ci" else estimate
        if estimate in row.index and pd.isna(row[estimate]):
            return _reason(row, estimate, why)
        if "n_tasks" in row.index and not pd.isna(row["n_tasks"]) and row["n_tasks"] < 2:
            return "one task"
    for explains in ("note", "method"):
        text = row.get(explains)
        if isinstance(text, str) and text and (explains == "note" or text.startswith(("no ", "undefined"))):
            return text
    return why.get("*", "undefined")


def flips_table(flipped: pd.DataFrame, baseline: str, candidate: str) -> pd.DataFrame:
    """``flips(episodes, baseline, candidate)`` with the variants named and linked: pass rates as
    percentages, the direction read from baseline to candidate, trajectories as transcript links.

    Example: ``HTML(flips_table(flips(e, "old", "new"), "old", "new").to_html(escape=False))``
    """
    return pd.DataFrame(
        {
            "task": flipped["task_id"],
            f"baseline {baseline}": [metric_value("passed", v) for v in flipped["pass_rate_a"]],
            f"candidate {candidate}": [metric_value("passed", v) for v in flipped["pass_rate_b"]],
            "baseline → candidate": flipped["direction"],
            f"trajectories {baseline}": flipped["paths_a"].map(trajectory_links),
            f"trajectories {candidate}": flipped["paths_b"].map(trajectory_links),
        }
    )


def labelled_criterion_ids(criteria: pd.DataFrame) -> list[str]:
    """Criterion ids that recorded an expected or observed label.

    Example: ``labelled_criterion_ids(runs.criteria)`` -> ``['skill_triggered']``
    """
    if criteria.empty:
        return []
    labelled = criteria[criteria["expected_label"].notna() | criteria["observed_label"].notna()]
    return sorted(map(str, labelled["criterion_id"].unique()))


TOKEN_BUCKETS = ["input_tokens", "output_tokens", "cache_read_tokens", "cache_creation_tokens"]


def token_buckets_plot(episodes: pd.DataFrame, ax: Any) -> Any:
    """Mean tokens per valid episode, stacked by bucket, one bar per variant; the legend sits outside
    the axes so it never covers a bar. Returns ``ax``."""
    valid = episodes[episodes["outcome"] != "invalid"]
    means = valid.groupby("variant_id")[TOKEN_BUCKETS].mean()
    means.columns = [c.removesuffix("_tokens").replace("_", " ") for c in means.columns]
    means.plot.bar(stacked=True, ax=ax, rot=0)
    ax.set_xlabel("")
    ax.set_ylabel("mean tokens per episode")
    ax.legend(title="bucket", loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    return ax
