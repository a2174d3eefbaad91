"""The end of ``coder-eval run`` on the console: totals per variant, the episodes that did not pass and
why, the exit code for what was measured, and how to resume after Ctrl-C.

Example (what ``run`` prints after its episodes; the table drawn with box characters)::

    run: runs/20260101-120000-ab12  pass 9  fail 6  invalid 1
                        episodes by variant
    variant      pass  fail  invalid     cost   tokens  time/episode
    baseline        4     3        1  $0.4210  120,345         3.1 s
    with_skill      5     3        0  $0.3901  101,220         2.8 s
    not passed: 7 of 16 episodes (each in full: coder-eval show runs/20260101-120000-ab12 EPISODE)
      invalid  calc--baseline--r1: infra_error: model API error 401: invalid x-api-key
      fail     calc--baseline--r0 (+2 like it): hidden-tests (the hidden unit tests pass): exit 1: ...

Every reason holds what the agent wrote, so it is printed through ``coder_eval.terminal.inert``.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from rich.table import Table
from rich.text import Text

from coder_eval.cli.app import console, out
from coder_eval.cli.report import print_report_outcomes
from coder_eval.cli.run_console import print_skills
from coder_eval.errors import ExitCode
from coder_eval.run.summary import NotPassed, RunSummary, VariantTotals, summarize_run
from coder_eval.run_dir import RunDir
from coder_eval.terminal import inert

if TYPE_CHECKING:
    from coder_eval.run import AfterRun, Finished, RunResult, Totals
    from coder_eval.run.gates import GateResult

LISTED = 20
"""Reasons listed at the end of a run (identical ones are listed once, with a count)."""


def print_totals(run: RunDir, resumed: int | None = None, summary: RunSummary | None = None) -> RunSummary:
    """The run's line and its table of totals per variant (``summary``: read from ``run`` unless
    given); ``resumed``: episodes kept by ``--resume``."""
    summary = summary or summarize_run(run)
    counts = summary.outcomes
    kept = f"  (kept {resumed} finished)" if resumed is not None else ""
    line = f"run: {shown_path(run.path)}  " + "  ".join(f"{k} {n}" for k, n in counts.items())
    out.print(line + kept, highlight=False, soft_wrap=True)
    if summary.finished:
        out.print(totals_table(summary.variants))
    if summary.unverified:
        out.print(
            f"record: {summary.unverified} of {summary.finished} episodes are the agent's own account, "
            "unverified (no harness vantage point on the model, or a tempdir sandbox; docs/trajectory.md)",
            highlight=False,
            soft_wrap=True,
        )
    return summary


def print_run_totals(run: RunDir, totals: Totals) -> None:
    """At the end of ``coder-eval run``: the totals, the skills each arm was offered and used, and
    the episodes that did not pass."""
    print_totals(run, totals.kept, totals.summary)
    print_skills(totals.skills)
    print_not_passed(run, totals.summary)


def totals_table(variants: Sequence[VariantTotals]) -> Table:
    """Per variant: outcomes of the finished episodes, their cost, tokens and mean wall time."""
    table = Table("variant", title="episodes by variant")
    for name in ("pass", "fail", "invalid", "cost", "tokens", "time/episode"):
        table.add_column(name, justify="right")
    for v in variants:
        if not v.finished:
            continue
        table.add_row(
            Text(v.variant_id),
            *(str(v.outcomes[k]) for k in ("pass", "fail", "invalid")),
            _cost(v),
            f"{v.tokens:,}",
            f"{v.seconds / v.finished:.1f} s",
        )
    return table


def _cost(v: VariantTotals) -> str:
    if v.unpriced == v.finished:
        return "unknown"
    unpriced = f" + {v.unpriced} unpriced" if v.unpriced else ""
    return f"${v.cost_usd:.4f}{unpriced}"


def print_not_passed(run: RunDir, summary: RunSummary) -> None:
    """The episodes that did not pass, invalid first, each reason once (with how many share it)."""
    if not summary.not_passed:
        return
    hint = f"coder-eval show {shown_path(run.path)} EPISODE"
    out.print(
        f"not passed: {len(summary.not_passed)} of {summary.finished} episodes (each in full: {hint})",
        highlight=False,
        soft_wrap=True,
    )
    groups = grouped(summary.not_passed)
    for (outcome, reason), episodes in list(groups.items())[:LISTED]:
        more = f" (+{len(episodes) - 1} like it)" if len(episodes) > 1 else ""
        text = f"  {outcome:<8} {inert(episodes[0])}{more}: {inert(reason)}"
        out.print(text, markup=False, highlight=False, soft_wrap=True)
    if len(groups) > LISTED:
        out.print(f"  … and {len(groups) - LISTED} more reasons", highlight=False)


def grouped(not_passed: Sequence[NotPassed]) -> dict[tuple[str, str], list[str]]:
    """Episode ids by (outcome, reason), ``invalid`` before ``fail``, in run order within each."""
    groups: dict[tuple[str, str], list[str]] = {}
    for episode in sorted(not_passed, key=lambda e: e.outcome != "invalid"):
        groups.setdefault((episode.outcome, episode.reason), []).append(episode.episode_id)
    return groups


def print_finished(after: AfterRun, finished: Finished) -> None:
    """What the end of a run did: reports left out, the headline, gates, JUnit, each report."""
    if finished.reports_skipped:
        console.print("reports not rendered: nothing was measured (coder-eval report renders them anyway)")
    if finished.headline_error is not None:
        out.print(
            f"headline: not computed ({finished.headline_error})",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
    elif finished.headline_line is not None:
        out.print(f"headline: {finished.headline_line}", markup=False, highlight=False, soft_wrap=True)
    if finished.gates is not None:
        print_gates(finished.gates)
    if finished.junit is not None:
        counts = finished.junit
        out.print(
            f"junit: {after.junit_xml}  tests {counts.tests}  failures {counts.failures}  "
            f"errors {counts.errors}  skipped {counts.skipped}",
            highlight=False,
        )
    print_report_outcomes(finished.reports)


def print_gates(results: list[GateResult]) -> None:
    out.print(gate_table(results))
    for r in results:
        label = f" ({r.label})" if r.label else ""
        out.print(f"  {r.gate} {r.variant_id} {r.metric}{label}: {r.note}", highlight=False, soft_wrap=True)


def gate_table(results: list[GateResult]) -> Table:
    """The gate table: point estimate against threshold, interval beside it (notes printed after it)."""
    from coder_eval.run.gates import failed

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


def print_outcome(result: RunResult) -> None:
    """Why the exit code is what the outcomes made it: a budget stop, nothing measured, a smoke test."""
    if result.budget_stopped:
        console.print(
            f"budget of ${result.max_cost_usd} reached: {result.batch.not_started} episodes not started"
        )
    if result.finished.not_gated is not None:
        console.print(
            f"not gated: the store is busy, so the run was not compared with its baseline "
            f"(exit {ExitCode.NOT_GATED}; run again, or compare later with coder-eval report --baseline)",
            highlight=False,
            soft_wrap=True,
        )
    summary = result.totals
    if not result.measured:
        console.print(
            f"nothing was measured: all {summary.finished} finished episodes are invalid (reasons above)",
            highlight=False,
        )
    elif result.all_passed_failed:
        console.print(
            f"--require-all-pass: {len(summary.not_passed)} of {summary.finished} episodes did not pass",
            highlight=False,
        )


def resume_hint(run: RunDir) -> str:
    """What to type to finish an interrupted run, and how far it got."""
    manifest = run.read_manifest()
    done = len(run.finished_episodes().keys() & {e.episode_id for e in manifest.episodes})
    return (
        f"{done} of {len(manifest.episodes)} episodes finished; "
        f"resume with: coder-eval run --resume --run-dir {shown_path(run.path)}"
    )


def shown_path(path: Path) -> str:
    """``path`` relative to the working directory when it lies inside it (as a user would type it)."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)
    except OSError:
        return os.fspath(path)
