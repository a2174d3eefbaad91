"""After the episodes: the headline, gates (recorded in ``run.json``), JUnit XML, reports; as data.

Example::

    finished = finish_run(run, manifest, resolution, AfterRun(min_pass_rate=0.8, report=False))
    finished.gates, finished.headline_line, finished.failed_gates
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from coder_eval.errors import CoderEvalError, InputError
from coder_eval.experiment import Resolution
from coder_eval.gates import GateResult, evaluate_gates, failed
from coder_eval.junit import JunitCounts, write_junit
from coder_eval.manifest import GateRecord
from coder_eval.run.reports import ReportOutcome, render_run_reports
from coder_eval.run_dir import RunDir, RunManifest
from coder_eval.run_summary import RunSummary


@dataclass(frozen=True)
class AfterRun:
    """What a run does once its episodes are done (``require_all_pass``: a smoke test, any episode
    that did not pass fails the run)."""

    min_pass_rate: float | None = None
    junit_xml: Path | None = None
    report: bool = True
    require_all_pass: bool = False


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
) -> Finished:
    """Headline, gates, JUnit and reports for a finished (or budget-stopped) run. No reports when
    nothing was measured (they would show nothing; ``coder-eval report`` renders them anyway)."""
    finished = Finished(reports_skipped=after.report and not totals.measured)
    finished.headline_line, finished.headline_error = record_headline(run, manifest)
    if after.min_pass_rate is not None or resolution.suites:
        finished.gates = run_gates(run, manifest, resolution, after.min_pass_rate)
    if after.junit_xml is not None:
        finished.junit = write_junit(run, after.junit_xml)
    if after.report and totals.measured:
        finished.reports = render_run_reports(run.path, manifest.variants, on_reports)
    return finished


def record_headline(run: RunDir, manifest: RunManifest) -> tuple[str | None, str | None]:
    """With two variants or more: the declared comparison in one line (``verdicts.headline``), recorded
    in run.json (``headline``) for JUnit; returns the line, or why it was not computed. Needs the
    analysis extra; never fails the run."""
    if len(manifest.variants) < 2:
        return None, None
    try:
        from coder_eval.analysis.notebook import jsonable
        from coder_eval.analysis.verdicts import headline
    except ImportError:
        return None, None
    try:
        verdicts = headline(run.path)
    except CoderEvalError as exc:
        return None, str(exc)
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
        raise InputError("gates need the analysis extra: pip install 'coder_eval[analysis]'") from exc
    ungated = [v.variant_id for v in resolution.experiment.variants if not v.gated]
    results = evaluate_gates(
        load_runs(run.path), manifest.variants, resolution.suites, min_pass_rate, ungated
    )
    manifest.gates = [GateRecord.model_validate(r.as_json()) for r in results]
    run.write_manifest(manifest)
    return results
