"""The reports a run renders after its episodes, and what became of each.

After a run: ``run_report``; ``compare_report`` (the declared pair: the variant named ``baseline``,
else the first, against the first other) when the experiment has two or more variants;
``classification_report`` for each criterion that recorded labels (in
``reports/<run_id>/<criterion_id>/`` when there are several).

A run resumed with nothing left to run keeps its reports when each rendered well after its last
trajectory was written (``reuse``): rendering them again would show the same (34 s for the demo).

Example::

    outcomes = render_run_reports(Path("runs/latest"), ["baseline", "with_skill"])
    [(o.template, o.html_path, o.ok) for o in outcomes]
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from coder_eval.errors import ReportError

if TYPE_CHECKING:
    from coder_eval.run.render import ReportResult
    from coder_eval.run.report_kernel import ReportKernel


class ReportJob(NamedTuple):
    template: str
    params: dict[str, str]
    out_dir: Path | None = None


@dataclass(frozen=True)
class ReportOutcome:
    """One rendered report: its page, or why it failed (``raised``: it could not even start, so no
    page shows the error)."""

    template: str
    html_path: Path | None
    ok: bool
    error: str | None = None
    raised: bool = False
    kept: bool = False
    """Not rendered again: the page from before still shows every trajectory (``reuse``)."""


def render_run_reports(
    run: Path,
    variants: Sequence[str],
    on_start: Callable[[list[str]], None] | None = None,
    out_dir: Path | None = None,
    reuse: bool = False,
    kernel: ReportKernel | None = None,
) -> list[ReportOutcome]:
    """Render the after-run reports into ``out_dir`` (default ``reports/<run_id>``; ``on_start`` is
    told their templates first), one after the other in one kernel (``report_kernel.py``), each
    exported to HTML in a thread while the next one executes; a failed one is recorded in its
    outcome, and the others are still rendered. With ``reuse`` (nothing new ran), reports that are
    up to date are kept as they are, when all of them are.

    ``kernel``: one started earlier (``ReportKernel().start(folder)``, e.g. while the run's last
    episodes finish, so its start and imports are not waited for here); it is closed here."""
    from coder_eval.run.render import REPORTS_DIR, run_id
    from coder_eval.run.report_kernel import ReportKernel

    shared = kernel or ReportKernel()
    with shared as kernel, ThreadPoolExecutor(1, "coder-eval-report-export") as exports:
        folder = out_dir or REPORTS_DIR / run_id(run)  # where render_report writes the first one
        if not reuse:  # the kernel starts while the reports are prepared
            _start(kernel, folder, exports)
        jobs = report_jobs(run, list(variants), out_dir)
        if reuse:
            kept = [kept_report(run, job) for job in jobs]
            if all(k is not None for k in kept):
                return [k for k in kept if k is not None]
            _start(kernel, folder, exports)
        if on_start is not None:
            on_start([job.template for job in jobs])
        pending = [_render(run, job, kernel, exports) for job in jobs]
        return [_outcome(template, done) for template, done in pending]


def _start(kernel: ReportKernel, folder: Path, exports: Executor) -> None:
    """Start ``kernel`` in ``folder`` (made), and build the HTML exporter in ``exports`` while the
    kernel imports; without the notebook stack each report says so."""
    from coder_eval.run.render_files import html_exporter

    folder.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(ImportError):
        kernel.start(folder)
    exports.submit(html_exporter)  # its ImportError, if any, is the export's to report


def report_jobs(run: Path, variants: list[str], out_dir: Path | None = None) -> list[ReportJob]:
    from coder_eval.run.render import REPORTS_DIR

    jobs = [ReportJob("run_report", {}, out_dir)]
    if len(variants) >= 2:  # the declared pair, as the headline line names it
        jobs.append(ReportJob("compare_report", {}, out_dir))
    labelled = labelled_criteria(run)
    base = out_dir or REPORTS_DIR / run.resolve().name
    for criterion in labelled:
        folder = base / criterion if len(labelled) > 1 else out_dir
        jobs.append(ReportJob("classification_report", {"criterion": criterion}, folder))
    return jobs


def kept_report(run: Path, job: ReportJob) -> ReportOutcome | None:
    """The report ``job`` rendered before, when its last render worked, on this run, after the run's
    last trajectory was written; else None (it must be rendered)."""
    from coder_eval.run.render import REPORTS_DIR, read_index
    from coder_eval.run.render_files import RenderFiles

    folder = job.out_dir or REPORTS_DIR / run.resolve().name
    entry = read_index(folder).get("reports", {}).get(job.template)
    page = RenderFiles(folder, job.template).html
    if not isinstance(entry, dict) or entry.get("ok") is not True or not page.is_file():
        return None
    if [Path(r).resolve() for r in entry.get("runs", [])] != [run.resolve()]:
        return None
    trajectories = [p.stat().st_mtime_ns for p in (run / "episodes").glob("*.jsonl")]
    if trajectories and page.stat().st_mtime_ns <= max(trajectories):
        return None
    return ReportOutcome(job.template, page, ok=True, kept=True)


def labelled_criteria(run: Path) -> list[str]:
    """Criterion ids that recorded an expected or observed label in the run (read from the
    trajectories' rows as the criteria frame has them, without building the frames)."""
    from coder_eval.analysis.frames.columns import CRITERIA, names
    from coder_eval.analysis.frames.rows import parse_trajectory
    from coder_eval.run_dir import EPISODES

    columns = names(CRITERIA)
    at = columns.index("criterion_id"), columns.index("observed_label"), columns.index("expected_label")
    found = {
        str(row[at[0]])
        for path in sorted((run / EPISODES).glob("*.jsonl"))
        for row in parse_trajectory(path).criteria
        if row[at[1]] is not None or row[at[2]] is not None
    }
    return sorted(found)


def _render(
    run: Path, job: ReportJob, kernel: ReportKernel, exports: Executor
) -> tuple[str, ReportOutcome | Future[ReportResult]]:
    """Execute ``job`` in ``kernel`` here, and hand its export to ``exports``: the outcome, or the
    export's future."""
    from coder_eval.run.render import execute_report, publish_report

    try:
        executed = execute_report([run], job.template, job.params, job.out_dir, kernel=kernel)
    except (ReportError, ImportError) as exc:
        return job.template, ReportOutcome(job.template, None, False, str(exc), raised=True)
    return job.template, exports.submit(publish_report, executed)


def _outcome(template: str, done: ReportOutcome | Future[ReportResult]) -> ReportOutcome:
    """What became of one report, once its export finished."""
    if isinstance(done, ReportOutcome):
        return done
    try:
        result = done.result()
    except (ReportError, ImportError) as exc:
        return ReportOutcome(template, None, False, str(exc), raised=True)
    return ReportOutcome(template, result.html_path, result.ok, None if result.ok else result.error)
