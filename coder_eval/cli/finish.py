"""After the episodes: gates (table on stdout and in ``run.json``), JUnit XML, reports; the exit code.

Exit code precedence: nothing measured (5, ``summary.outcome_code``) over a budget stop (3, set by
the caller) over a failed gate (1) over a failed report (4).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from rich.table import Table

from coder_eval.cli.app import out
from coder_eval.cli.report import render_run_reports
from coder_eval.errors import CoderEvalError, ExitCode, InputError
from coder_eval.experiment import Resolution
from coder_eval.gates import GateResult, evaluate_gates, failed
from coder_eval.junit import write_junit
from coder_eval.run_dir import RunDir, RunManifest


@dataclass(frozen=True)
class AfterRun:
    """What ``run`` does once the episodes are done."""

    min_pass_rate: float | None = None
    junit_xml: Path | None = None
    report: bool = True


def finish(run: RunDir, manifest: RunManifest, resolution: Resolution, after: AfterRun) -> int:
    """Gates, JUnit and reports for a finished (or budget-stopped) run; returns 0, 1 or 4."""
    code = 0
    print_headline(run, manifest)
    if after.min_pass_rate is not None or resolution.suites:
        results = run_gates(run, manifest, resolution, after.min_pass_rate)
        code = ExitCode.GATE_FAILED if failed(results) else 0
    if after.junit_xml is not None:
        counts = write_junit(run, after.junit_xml)
        out.print(
            f"junit: {after.junit_xml}  tests {counts.tests}  failures {counts.failures}  "
            f"errors {counts.errors}  skipped {counts.skipped}",
            highlight=False,
        )
    if after.report and not render_run_reports(run.path, manifest.variants):
        code = code or ExitCode.REPORT_FAILED
    return code


def print_headline(run: RunDir, manifest: RunManifest) -> None:
    """With two variants or more: the declared comparison in one line (``verdicts.headline``), recorded
    in run.json (``extra.headline``) for JUnit. Needs the analysis extra; never fails the run."""
    if len(manifest.variants) < 2:
        return
    try:
        from coder_eval.analysis.notebook import jsonable
        from coder_eval.analysis.verdicts import headline
    except ImportError:
        return
    try:
        verdicts = headline(run.path)
    except CoderEvalError as exc:
        out.print(f"headline: not computed ({exc})", markup=False, highlight=False, soft_wrap=True)
        return
    manifest.extra["headline"] = jsonable(verdicts.headline())
    run.write_manifest(manifest)
    out.print(f"headline: {verdicts.line()}", markup=False, highlight=False, soft_wrap=True)


def run_gates(
    run: RunDir, manifest: RunManifest, resolution: Resolution, min_pass_rate: float | None
) -> list[GateResult]:
    """Evaluate, print and record (``manifest.extra["gates"]``) every gate."""
    try:
        from coder_eval.analysis import load_runs
    except ImportError as exc:
        raise InputError("gates need the analysis extra: pip install 'coder_eval[analysis]'") from exc
    ungated = [v.variant_id for v in resolution.experiment.variants if not v.gated]
    results = evaluate_gates(
        load_runs(run.path), manifest.variants, resolution.suites, min_pass_rate, ungated
    )
    out.print(gate_table(results))
    for r in results:
        label = f" ({r.label})" if r.label else ""
        out.print(f"  {r.gate} {r.variant_id} {r.metric}{label}: {r.note}", highlight=False, soft_wrap=True)
    manifest.extra["gates"] = [r.as_json() for r in results]
    run.write_manifest(manifest)
    return results


def gate_table(results: list[GateResult]) -> Table:
    """The gate table: point estimate against threshold, interval beside it (notes printed after it)."""
    n_failed, n_passed = len(failed(results)), sum(r.verdict == "pass" for r in results)
    title = f"gates: {n_passed} passed, {n_failed} failed (point estimate ≥ threshold)"
    table = Table("gate", "variant", "metric", "value", "95% CI", "min", "result", title=title)
    for r in results:
        style = {"pass": "green", "fail": "red"}.get(r.verdict, "dim")
        table.add_row(
            r.gate,
            r.variant_id,
            f"{r.metric} ({r.label})" if r.label else r.metric,
            _number(r.value),
            "" if math.isnan(r.ci_low) else f"{_number(r.ci_low)}–{_number(r.ci_high)}",
            _number(r.threshold),
            f"[{style}]{r.verdict.upper()}[/{style}]",
        )
    return table


def _number(value: float) -> str:
    return "n/a" if math.isnan(value) else f"{value:.2f}"
