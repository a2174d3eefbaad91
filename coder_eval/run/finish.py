"""After the episodes: the headline, gates (recorded in ``run.json``), JUnit XML, reports; as data.

Example::

    finished = finish_run(run, manifest, resolution, AfterRun(min_pass_rate=0.8, report=False))
    finished.gates, finished.headline_line, finished.failed_gates
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from coder_eval.errors import CoderEvalError, InputError, StoreBusy
from coder_eval.experiment import Resolution
from coder_eval.manifest import GateRecord
from coder_eval.run.gates import GateResult, evaluate_gates, failed
from coder_eval.run.junit import JunitCounts, write_junit
from coder_eval.run.regression import NAN, FailOn, Guard, baseline_gates, sequence_gate, skill_gates
from coder_eval.run.reports import ReportOutcome, render_run_reports
from coder_eval.run.summary import RunSummary
from coder_eval.run_dir import RunDir, RunManifest
from coder_eval.version import pip_install

if TYPE_CHECKING:
    from coder_eval.analysis.answer.baseline_run import Regression
    from coder_eval.run.report_kernel import ReportKernel


@dataclass(frozen=True)
class AfterRun:
    """What a run does once its episodes are done (``require_all_pass``: a smoke test, any episode
    that did not pass fails the run)."""

    min_pass_rate: float | None = None
    junit_xml: Path | None = None
    report: bool = True
    require_all_pass: bool = False
    index: bool = True
    """Index the run into the run store (``store``; default ``$CODER_EVAL_STORE``, else
    ``history.duckdb`` beside the run folder)."""
    store: Path | None = None
    baseline: str | None = None
    """Compare with this run (a folder, a run id in the store, ``latest-on-BRANCH``): gate rows."""
    fail_on: FailOn = "never"
    max_drop: float | None = None
    """With ``baseline``: a drop of the primary metric's point estimate past this fails the gate too."""
    reports_dir: Path | None = None
    """Where the reports go (None: ``reports/<run id>`` under the current folder, as ``coder-eval
    run`` writes them)."""


@dataclass
class Finished:
    """What ``finish_run`` did: the headline (its line, or why it was not computed), the gates (None:
    none were asked for), the JUnit totals, each report, and whether reports were left out because
    nothing was measured."""

    headline_line: str | None = None
    headline_error: str | None = None
    gates: list[GateResult] | None = None
    junit: JunitCounts | None = None
    reports: list[ReportOutcome] = field(default_factory=list)
    reports_skipped: bool = False
    indexed_into: Path | None = None
    index_error: str | None = None
    regression: Regression | None = None
    baseline_note: str | None = None
    not_gated: str | None = None
    """Why a gate asked for (``--fail-on worse``) was not evaluated: another process held the store."""

    @property
    def failed_gates(self) -> bool:
        return self.gates is not None and bool(failed(self.gates))

    @property
    def failed_reports(self) -> bool:
        return any(not r.ok for r in self.reports)


def finish_run(
    run: RunDir,
    manifest: RunManifest,
    resolution: Resolution,
    after: AfterRun,
    totals: RunSummary,
    on_reports: Callable[[list[str]], None] | None = None,
    nothing_new: bool = False,
) -> Finished:
    """Gates, headline, JUnit, reports and the run store for a finished (or budget-stopped) run, in
    that order: the gates and the run's own record (run.json) are written before anything that may
    fail (a report, the store), and none of those fails the run. No reports when nothing was
    measured (they would show nothing; ``coder-eval report`` renders them anyway); with
    ``nothing_new`` (a resume that ran no episode) up-to-date reports are kept as they are."""
    finished = Finished(reports_skipped=after.report and not totals.measured)
    rendering = after.report and totals.measured
    with early_kernel(run, after, start=rendering and not nothing_new) as kernel:
        finish_steps(run, manifest, resolution, after, finished, nothing_new, on_reports, kernel)
    if after.index:
        finished.indexed_into, finished.index_error = index_finished(run.path, after.store)
    return finished


def finish_steps(
    run: RunDir,
    manifest: RunManifest,
    resolution: Resolution,
    after: AfterRun,
    finished: Finished,
    nothing_new: bool,
    on_reports: Callable[[list[str]], None] | None,
    kernel: ReportKernel | None,
) -> None:
    """``finish_run``'s steps up to the reports, into ``finished``."""
    if after.min_pass_rate is not None or resolution.suites:
        finished.gates = run_gates(run, manifest, resolution, after.min_pass_rate)
    gate = resolution.experiment.baseline
    if after.baseline is None and gate is not None:
        after = replace(after, baseline=gate.run, fail_on=gate.fail_on)
    if after.baseline is not None:
        record_baseline(run, manifest, after, finished)
    if after.fail_on == "worse":
        add_gates(run, manifest, finished, guard_gates(run, manifest, after.fail_on))
    finished.headline_line, finished.headline_error = record_headline(run, manifest)
    if after.junit_xml is not None:
        finished.junit = write_junit(run, after.junit_xml)
    if after.report and not finished.reports_skipped:
        finished.reports = render_run_reports(
            run.path, manifest.variants, on_reports, after.reports_dir, reuse=nothing_new, kernel=kernel
        )


@contextlib.contextmanager
def early_kernel(run: RunDir, after: AfterRun, start: bool) -> Iterator[ReportKernel | None]:
    """The reports' kernel, started (when ``start``) before the gates and the headline, so that its
    start and imports (about 2.5 s) overlap them instead of being waited for; closed at the end. A
    kernel that cannot start here fails nothing: the reports start their own and say why."""
    if not start:
        yield None
        return
    from coder_eval.run.render import REPORTS_DIR, run_id
    from coder_eval.run.report_kernel import ReportKernel

    kernel = ReportKernel()
    try:
        with contextlib.suppress(Exception):  # the gates come first; the reports retry and report
            kernel.start(after.reports_dir or REPORTS_DIR / run_id(run.path))
        yield kernel
    finally:
        kernel.close()


def record_baseline(run: RunDir, manifest: RunManifest, after: AfterRun, finished: Finished) -> None:
    """The run against its baseline, as gate rows added to the others (and to run.json). A store
    another process holds leaves the run not gated (``not_gated``), never failed; a baseline that
    cannot be read fails the gate with ``--fail-on worse``."""
    from coder_eval.store.connection import store_for

    assert after.baseline is not None
    try:
        rows, finished.regression, finished.baseline_note = baseline_gates(
            run, store_for(run.path, after.store), after.baseline, Guard(after.fail_on, after.max_drop)
        )
    except StoreBusy as exc:
        finished.not_gated = str(exc) if after.fail_on == "worse" else None
        note = f"not gated: {exc}"
        rows = [GateResult("baseline", "(all)", "passed", NAN, verdict="not gated", note=note)]
    except CoderEvalError as exc:  # a baseline that names nothing, or is not a run
        verdict: Literal["fail", "not gated"] = "fail" if after.fail_on == "worse" else "not gated"
        rows = [GateResult("baseline", "(all)", "passed", NAN, verdict=verdict, note=str(exc))]
    add_gates(run, manifest, finished, rows)


def guard_gates(run: RunDir, manifest: RunManifest, fail_on: FailOn) -> list[GateResult]:
    """Beside the test, with ``--fail-on worse``: a skill offered and never loaded, and a run that
    stopped at its answer as its decision says (blocked and inconclusive said so)."""
    rows = skill_gates(run, fail_on)
    if manifest.adaptive is not None and manifest.adaptive.stop is not None:
        rows.append(sequence_gate(manifest.adaptive, fail_on))
    return rows


def add_gates(run: RunDir, manifest: RunManifest, finished: Finished, rows: list[GateResult]) -> None:
    """Rows added to the gate table and to run.json."""
    if rows:
        finished.gates = [*(finished.gates or []), *rows]
        manifest.gates = [GateRecord.model_validate(r.as_json()) for r in finished.gates]
        run.write_manifest(manifest)


def index_finished(folder: Path, store: Path | None) -> tuple[Path | None, str | None]:
    """Index the run into the run store; returns the store, or why it was not indexed (never fails
    the run, whatever goes wrong: ``coder-eval history --index`` indexes it later)."""
    try:
        from coder_eval.store import RunStore, index_run
        from coder_eval.store.connection import store_for
    except ImportError:
        return None, None
    path = store_for(folder, store)
    try:
        with RunStore.open(path) as opened:
            index_run(opened, folder)
    except (CoderEvalError, OSError) as exc:
        return None, f"{exc}; index it later with coder-eval history --index {folder}"
    except Exception as exc:  # the promise: indexing never fails a finished run
        why = f"{type(exc).__name__}: {exc}"
        return (
            None,
            f"{path}: cannot index the run ({why}); index it later with coder-eval history --index {folder}",
        )
    return path, None


def record_headline(run: RunDir, manifest: RunManifest) -> tuple[str | None, str | None]:
    """With two variants or more: the declared comparison in one line (``verdicts.headline``), recorded
    in run.json (``headline``) for JUnit; returns the line, or why it was not computed. Needs the
    analysis extra; never fails the run."""
    if len(manifest.variants) < 2:
        return None, None
    try:
        from coder_eval.analysis.answer.engine import headline
        from coder_eval.analysis.views.notebook import jsonable
    except ImportError:
        return None, None
    try:
        verdicts = headline(run.path)
    except CoderEvalError as exc:
        return None, str(exc)
    except Exception as exc:  # the gates are recorded already; a headline that fails fails nothing
        return None, f"{type(exc).__name__}: {exc}"
    manifest.headline = jsonable(verdicts.headline())
    run.write_manifest(manifest)
    return verdicts.line(), None


def run_gates(
    run: RunDir, manifest: RunManifest, resolution: Resolution, min_pass_rate: float | None
) -> list[GateResult]:
    """Evaluate and record (``manifest.gates``) every gate."""
    try:
        from coder_eval.analysis import load_runs
    except ImportError as exc:
        raise InputError(f"gates need the analysis extra: {pip_install('analysis')}") from exc
    ungated = [v.variant_id for v in resolution.experiment.variants if not v.gated]
    results = evaluate_gates(
        load_runs(run.path), manifest.variants, resolution.suites, min_pass_rate, ungated
    )
    manifest.gates = [GateRecord.model_validate(r.as_json()) for r in results]
    run.write_manifest(manifest)
    return results
