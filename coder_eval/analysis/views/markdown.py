"""A run's results as Markdown, fit for a pull-request comment or ``$GITHUB_STEP_SUMMARY``: the totals
and cost, the run against its baseline (each variant's verdicts with their intervals, what got worse
and better, which tasks were not paired), the verdicts between the run's own variants, and links to
its HTML reports. Every number comes from the verdict engine (``verdicts``, ``against_baseline``).

Example::

    text = run_markdown(Path("runs/latest"), regression, link_base="https://ci.example/artifacts")
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from coder_eval.analysis.answer.baseline_run import ArmRegression, Regression
from coder_eval.analysis.answer.engine import verdicts
from coder_eval.analysis.answer.wording import (
    NAMES,
    effect_text,
    interval_text,
    invalid_text,
    mde_text,
    metric_value,
    p_text,
    verdict_cell,
)
from coder_eval.analysis.frames.load import Runs, load_runs
from coder_eval.analysis.stats.compare import Comparison
from coder_eval.manifest import SourceRecord
from coder_eval.run_dir import read_manifest

SHOWN = ("passed", "score", "cost_usd", "total_tokens", "duration_s")
"""The metrics the summary's tables show (the primary one first)."""
TASKS_LISTED = 20


def run_markdown(
    run: Path,
    regression: Regression | None = None,
    link_base: str | None = None,
    reports: Path | None = None,
    baseline_note: str | None = None,
) -> str:
    """The Markdown summary of the run folder ``run`` (``reports``: its HTML reports' folder, default
    ``reports/<run_id>``; ``link_base``: a URL the links start with instead of that folder;
    ``baseline_note``: why there is no baseline comparison, when one was asked for)."""
    manifest = read_manifest(run)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        runs = load_runs(run)
    parts = [f"## coder_eval: run `{manifest.run_id}`", totals_line(runs, manifest.status, manifest.source)]
    if regression is not None:
        parts += baseline_section(regression)
    elif baseline_note:
        parts += ["### Against the baseline", baseline_note]
    if len(manifest.variants) > 1:
        parts += variants_section(runs)
    parts += reports_section(reports or Path("reports") / manifest.run_id, link_base)
    return "\n\n".join(parts) + "\n"


def totals_line(runs: Runs, status: str, source: SourceRecord | None) -> str:
    """``**completed** · 16 episodes: 12 pass, 3 fail, 1 invalid (excluded) · cost $1.20 · main @ 3f2c1a0``"""
    counts = runs.episodes["outcome"].value_counts()
    cost = runs.episodes["cost_usd"].sum(min_count=1)
    where = ""
    if source is not None:
        where = f" · {source.git_branch or '?'} @ {(source.git_commit or '?')[:7]}"
    tally = ", ".join(f"{counts.get(k, 0)} {k}" for k in ("pass", "fail", "invalid"))
    episodes = f"{len(runs.episodes)} episodes: {tally} (invalid excluded)"
    return f"**{status}** · {episodes} · cost {money(cost)}{where}"


def money(value: float) -> str:
    return "unknown" if value is None or math.isnan(value) else f"${value:.2f}"


def baseline_section(found: Regression) -> list[str]:
    """The run against its baseline: the call, a verdict table per variant, the tasks that moved."""
    if found.nothing_paired:
        return [
            f"### Against the baseline `{found.baseline_run}`",
            f"No regression called: {found.nothing_paired}",
        ]
    call = "**Regression: called worse than the baseline**" if found.regressed else "No regression called"
    parts = [
        f"### Against the baseline `{found.baseline_run}`",
        f"{call} · pairing: {found.pairing.description}",
    ]
    for arm in found.arms:
        if not arm.verdicts.available:
            parts.append(f"`{arm.variant_id}`: no comparison: {arm.verdicts.note}")
            continue
        parts.append(f"`{arm.variant_id}` against `{arm.baseline_variant}` of the baseline:")
        parts.append(verdict_table(arm.verdicts.comparisons))
        parts.append(moved(arm))
    parts += [f"`{v}`: the baseline has no variant to pair it with" for v in found.unmatched]
    return parts


def variants_section(runs: Runs) -> list[str]:
    """The declared comparison between the run's own variants."""
    found = verdicts(runs)
    if not found.available:
        return [f"### Variants\n\nno comparison: {found.note}"]
    title = f"### `{found.candidate}` against `{found.baseline}` in this run"
    return [title, found.selection.description, verdict_table(found.comparisons)]


def verdict_table(comparisons: Sequence[Comparison]) -> str:
    """metric | baseline | candidate | change [interval] | p | verdict, one row per shown metric."""
    rows = [
        "| metric | baseline | this run | change [95 % interval] | p | verdict |",
        "|---|---|---|---|---|---|",
    ]
    for c in comparisons:
        if c.metric not in SHOWN:
            continue
        verdict = verdict_cell(c).replace("candidate", "this run")
        bold = f"**{verdict}**" if c.verdict != "inconclusive" else f"{verdict} (MDE {mde_text(c)})"
        rows.append(
            f"| {NAMES.get(c.metric, c.metric)} | {metric_value(c.metric, c.mean_b)} | "
            f"{metric_value(c.metric, c.mean_a)} | {effect_text(c)} {interval_text(c)} | "
            f"{p_text(c).removeprefix('p = ')} | {bold} |"
        )
    said = next((invalid_text(c) for c in comparisons if invalid_text(c)), "")
    if said:
        rows += ["", f"_{said}_"]
    return "\n".join(rows)


def moved(arm: ArmRegression) -> str:
    """The tasks whose pass rate went down and up, in a collapsed block."""
    worse, better = arm.worse, arm.better
    if worse.empty and better.empty:
        return "No task's pass rate changed."
    lines = [f"<details><summary>worse on {len(worse)} tasks, better on {len(better)}</summary>", ""]
    lines += ["| task | baseline | this run |", "|---|---|---|"]
    for frame in (worse, better):
        lines += [task_row(row) for _, row in frame.head(TASKS_LISTED).iterrows()]
    return "\n".join([*lines, "", "</details>"])


def task_row(row: pd.Series) -> str:
    return f"| `{row['task_id']}` | {row['baseline']:.0%} | {row['candidate']:.0%} |"


def reports_section(folder: Path, link_base: str | None) -> list[str]:
    """Links to the run's HTML reports, when there are any."""
    pages = sorted(folder.glob("**/*.html")) if folder.is_dir() else []
    if not pages:
        return []
    links = [f"- [{p.relative_to(folder).with_suffix('')}]({link(p, folder, link_base)})" for p in pages]
    return ["### Reports", "\n".join(links)]


def link(page: Path, folder: Path, base: str | None) -> str:
    return f"{base.rstrip('/')}/{page.relative_to(folder).as_posix()}" if base else page.as_posix()
