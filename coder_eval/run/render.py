"""Render the report notebooks (``notebooks/``, shipped as ``coder_eval.notebooks``) with papermill
and export them to HTML.

Example::

    result = render_report([Path("runs/latest")], "compare_report", parse_params(["baseline=old"]))
    result.ok, result.html_path      # (True, PosixPath('reports/<run_id>/compare_report.html'))

Writes, into ``reports/<run_id>/`` by default (``reports/<id1>+<id2>/`` for several runs):

- ``<template>.ipynb``: the executed notebook, outputs included;
- ``<template>.html``: the same without code, figures embedded, loading nothing remote;
- ``<template>.summary.json``: the headline numbers the notebook computed;
- ``summary.json``: one entry per template rendered into the folder: ok, error, file names and the
  headline numbers.

A render goes to hidden temporary files that are moved into place only when it succeeded, so a
failed re-render never replaces a good report: it is written as ``<template>.failed.html`` (and
``.failed.ipynb``), with the error shown, and the good files and their ``summary.json`` entry stay as
they were. Everything that can be checked without a kernel (template, parameters, run directories)
is checked first and raises ``ReportError``. Heavy imports (papermill, nbconvert) happen inside the
functions that need them, so importing this module stays cheap.
"""

from __future__ import annotations

import contextlib
import importlib.resources
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from coder_eval.errors import ReportError, unknown_name
from coder_eval.interop.log_readers.inspect_files import is_inspect_log
from coder_eval.run.render_files import RenderFiles, export_html
from coder_eval.run.report_kernel import execute
from coder_eval.run_dir import EPISODES, MANIFEST, read_manifest

if TYPE_CHECKING:
    from coder_eval.run.report_kernel import ReportKernel

TEMPLATE_PACKAGE = "coder_eval.notebooks"
"""The package that holds the templates: the top-level ``notebooks/`` folder, mapped by setuptools."""
REPORTS_DIR = Path("reports")
INDEX = "summary.json"
SUMMARY_PARAM = "summary_path"
ParamType = type[str] | type[int] | type[float]


@dataclass(frozen=True)
class Template:
    """A report notebook: its file in ``notebooks/``, where the run directories go, its parameters.

    ``params`` are what ``-p name=value`` may set; ``runs_param`` and ``summary_path`` are set by
    ``render_report`` itself. Example: ``TEMPLATES["compare_report"].params`` -> ``{"baseline": str, ...}``
    """

    notebook: str
    description: str
    runs_param: str
    many_runs: bool
    params: Mapping[str, ParamType]


TEMPLATES: dict[str, Template] = {
    "run_report": Template(
        "run_report.py",
        "what ran, outcomes, per-variant metrics with intervals, pass@k, criteria, tools, cost",
        runs_param="run_dir",
        many_runs=False,
        params={"top_n": int},
    ),
    "compare_report": Template(
        "compare_report.py",
        "paired comparison of two variants on every metric, flips, all pairs (Holm), power",
        runs_param="run_dirs",
        many_runs=True,
        params={
            "baseline": str,
            "candidate": str,
            "metric": str,
            "tags": str,
            "exclude_tags": str,
            "estimand": str,
            "adjust": str,
        },
    ),
    "classification_report": Template(
        "classification_report.py",
        "confusion matrix, precision / recall / F1 per label, misclassified items",
        runs_param="run_dir",
        many_runs=False,
        params={"criterion": str, "variant": str},
    ),
}


@dataclass(frozen=True)
class ReportResult:
    """What ``render_report`` wrote. After a failure ``html_path`` is ``<template>.failed.html`` and
    ``summary_path`` (the good render's headline) exists only if an earlier render succeeded."""

    notebook_path: Path
    html_path: Path
    summary_path: Path
    ok: bool
    error: str | None


def parse_params(pairs: Sequence[str]) -> dict[str, str]:
    """``["baseline=old", "metric=cost_usd"]`` -> ``{"baseline": "old", "metric": "cost_usd"}``.

    Raises ReportError for a pair without ``=``, a name that is not an identifier, or a repeated name.
    """
    params: dict[str, str] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        name = name.strip()
        if not sep or not name.isidentifier():
            raise ReportError(f"report parameter {pair!r} is not name=value (e.g. -p baseline=old)")
        if name in params:
            raise ReportError(f"report parameter {name!r} is given twice")
        params[name] = value
    return params


def render_report(
    run_dirs: Sequence[Path],
    template: str = "run_report",
    params: Mapping[str, str] = {},
    out_dir: Path | None = None,
    timeout: float = 600,
    kernel: ReportKernel | None = None,
) -> ReportResult:
    """Execute ``template`` on ``run_dirs`` and write notebook, HTML and summaries into ``out_dir``.

    ``timeout`` bounds each cell, in seconds; ``kernel`` is a kernel shared with other reports
    (``report_kernel.py``; default: one of its own). Example::

        render_report([Path("runs/latest")], "run_report", {"top_n": "10"}).ok
    """
    return publish_report(execute_report(run_dirs, template, params, out_dir, timeout, kernel))


@dataclass(frozen=True)
class Executed:
    """A report whose notebook ran (into ``files.notebook_tmp``), to be exported and published by
    ``publish_report``; ``error`` is why it failed, or None. ``here`` is the working folder a
    relative ``files.folder`` is in: papermill moves the whole process into the report's folder while
    a notebook runs, so a thread publishing the last report must not read relative paths."""

    template: str
    runs: list[Path]
    files: RenderFiles
    error: str | None
    here: Path


def execute_report(
    run_dirs: Sequence[Path],
    template: str = "run_report",
    params: Mapping[str, str] = {},
    out_dir: Path | None = None,
    timeout: float = 600,
    kernel: ReportKernel | None = None,
) -> Executed:
    """The first half of ``render_report``: check the inputs (``ReportError``), run the notebook.

    Example: ``publish_report(execute_report([Path("runs/latest")], "run_report")).ok``
    """
    spec = template_spec(template)
    runs = check_runs(run_dirs, template, spec)
    values = typed_params(template, spec, params)
    out = out_dir or REPORTS_DIR / "+".join(run_id(run) for run in runs)
    out.mkdir(parents=True, exist_ok=True)
    files = RenderFiles(out, template)
    values[spec.runs_param] = ",".join(str(run) for run in runs)
    values[SUMMARY_PARAM] = files.summary_tmp.name
    try:
        with template_path(spec) as notebook:
            error = execute(notebook, files.notebook_tmp, values, timeout, kernel)
    except BaseException:
        files.clean()
        raise
    return Executed(template, runs, files, error, Path.cwd())


def publish_report(executed: Executed) -> ReportResult:
    """The second half of ``render_report``: the HTML export, the files moved into place and the
    folder's index updated (safe in another thread while the next report executes). The paths
    returned are as ``execute_report`` was given them."""
    error, template, ok = executed.error, executed.template, executed.error is None
    files = RenderFiles(executed.here / executed.files.folder, template)  # absolute
    try:
        export_html(files.notebook_tmp, files.html_tmp, f"{template} (failed)" if error else template)
        files.publish(ok=ok)
    finally:
        files.clean()
    if ok or not _has_good_entry(files.folder, template):
        written = ReportResult(*files.paths(ok=ok), files.summary, ok=ok, error=error)
        update_index(files.folder, template, executed.runs, written)
    given = executed.files
    return ReportResult(*given.paths(ok=ok), given.summary, ok=ok, error=error)


def template_spec(template: str) -> Template:
    """The template called ``template``, or ReportError with a did-you-mean."""
    if template not in TEMPLATES:
        raise ReportError(unknown_name("report template", template, TEMPLATES))
    return TEMPLATES[template]


@contextlib.contextmanager
def template_path(spec: Template) -> Iterator[Path]:
    """The template's notebook as a file on disk (an absolute ``spec.notebook`` is used as is)."""
    if Path(spec.notebook).is_absolute():
        yield Path(spec.notebook)
        return
    with importlib.resources.as_file(importlib.resources.files(TEMPLATE_PACKAGE) / spec.notebook) as path:
        yield path


def check_runs(run_dirs: Sequence[Path], template: str, spec: Template) -> list[Path]:
    """Resolved run directories, each with at least one trajectory; ReportError otherwise."""
    if not run_dirs:
        raise ReportError("report needs a run directory (runs/<run_id> or runs/latest)")
    if len(run_dirs) > 1 and not spec.many_runs:
        raise ReportError(f"template {template!r} reports on one run; got {len(run_dirs)} run directories")
    runs = []
    for run in run_dirs:
        path = Path(run).resolve()
        if path.is_file() and is_inspect_log(path):  # an Inspect AI eval log (read by load_runs)
            runs.append(path)
            continue
        if not (path / MANIFEST).is_file():
            raise ReportError(
                f"{run}: not a run directory (no {MANIFEST}); pass runs/<run_id> or runs/latest"
            )
        if not any((path / EPISODES).glob("*.jsonl")):
            raise ReportError(
                f"{run}: no trajectories in {EPISODES}/; nothing to report (did the run start?)"
            )
        runs.append(path)
    return runs


def typed_params(template: str, spec: Template, params: Mapping[str, str]) -> dict[str, Any]:
    """Parameter values converted to their declared types; ReportError for unknown names or bad values."""
    values: dict[str, Any] = {}
    for name, text in params.items():
        if name not in spec.params:
            reserved = name in (spec.runs_param, SUMMARY_PARAM)
            why = " (set by the report command itself)" if reserved else ""
            raise ReportError(unknown_name(f"parameter of {template!r}{why}", name, spec.params))
        values[name] = convert(name, text, spec.params[name])
    return values


def convert(name: str, text: str, kind: ParamType) -> Any:
    """``convert("top_n", "10", int)`` -> ``10``; ReportError naming the parameter when it fails."""
    try:
        return kind(text)
    except ValueError:
        raise ReportError(f"parameter {name!r} must be {kind.__name__} (got {text!r})") from None


def run_id(run: Path) -> str:
    """The run id from the manifest, else the directory name."""
    if not (run / MANIFEST).is_file():  # no manifest: an Inspect log file
        return run.stem if run.is_file() else run.name
    return read_manifest(run).run_id


def read_index(out: Path) -> dict[str, Any]:
    """The report folder's ``summary.json`` index (empty when there is none or it cannot be read)."""
    try:
        index = json.loads((out / INDEX).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return index if isinstance(index, dict) else {}


def _has_good_entry(out: Path, template: str) -> bool:
    entry = read_index(out).get("reports", {}).get(template)
    return isinstance(entry, dict) and entry.get("ok") is True


def update_index(out: Path, template: str, runs: Sequence[Path], result: ReportResult) -> None:
    """Record this render in ``<out>/summary.json`` (replaced atomically), keeping other templates."""
    index = read_index(out)
    headline = json.loads(result.summary_path.read_text(encoding="utf-8")) if result.ok else None
    index.setdefault("reports", {})[template] = {
        "ok": result.ok,
        "error": result.error,
        "runs": [str(run) for run in runs],
        "notebook": result.notebook_path.name,
        "html": result.html_path.name,
        "summary": result.summary_path.name if result.ok else None,
        "headline": headline,
    }
    tmp = out / f".{INDEX}.tmp"
    tmp.write_text(json.dumps(index, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    tmp.replace(out / INDEX)
