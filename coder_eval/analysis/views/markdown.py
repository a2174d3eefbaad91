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
    missingness_note,
    p_text,
)
from coder_eval.analysis.frames.load import Runs, load_runs
from coder_eval.analysis.stats.compare import Comparison
from coder_eval.manifest import GateRecord, SourceRecord
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
    ``baseline_note``: why there is no baseline comparison, when one was asked for, or what a
    budget-stopped baseline leaves out)."""
    manifest = read_manifest(run)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        runs = load_runs(run)
    parts = [f"## coder_eval: run `{manifest.run_id}`", totals_line(runs, manifest.status, manifest.source)]
    parts += scripted_line(runs)
    if regression is not None:
        parts += baseline_section(regression) + ([baseline_note] if baseline_note else [])
    elif baseline_note:
        parts += ["### Against the baseline", baseline_note]
    parts += failed_gates(manifest.gates or [])
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


def scripted_line(runs: Runs) -> list[str]:
    """Whether the run's model was coder_eval's scripted server: its figures test the set-up, not a model."""
    episodes = runs.episodes
    scripted = int(episodes["scripted"].fillna(False).astype(bool).sum()) if "scripted" in episodes else 0
    if not scripted:
        return []
    share = "every episode" if scripted == len(episodes) else f"{scripted} of {len(episodes)} episodes"
    return [
        f"**Scripted model**: {share} ran against coder_eval's scripted model server (no API key), so "
        "these figures test the suite and the set-up, not a model; a scripted episode costs $0."
    ]


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


def failed_gates(gates: Sequence[GateRecord]) -> list[str]:
    """The gates the run failed (what made its exit code 1), one line each; nothing when none failed."""
    failed = [g for g in gates if g.verdict == "fail"]
    if not failed:
        return []
    lines = [f"### Gates: {len(failed)} of {len(gates)} failed", ""]
    for g in failed:
        value = "n/a" if g.value is None else f"{g.value:.2f}"
        bound = "" if g.threshold is None else f" (min {g.threshold:.2f})"
        label = f" {g.label}" if g.label else ""
        lines.append(f"- `{g.variant_id}` {g.gate}: {g.metric}{label} {value}{bound}")
    return ["\n".join(lines)]


def variants_section(runs: Runs) -> list[str]:
    """The declared comparison between the run's own variants."""
    found = verdicts(runs)
    if not found.available:
        return [f"### Variants\n\nno comparison: {found.note}"]
    title = f"### `{found.candidate}` against `{found.baseline}` in this run"
    table = verdict_table(found.comparisons, (f"`{found.baseline}`", f"`{found.candidate}`"))
    return [title, found.selection.description, table]


AMOUNT_WORDS = {
    "cost_usd": ("cheaper", "dearer"),
    "duration_s": ("faster", "slower"),
    "total_tokens": ("fewer tokens", "more tokens"),
    "num_turns": ("fewer turns", "more turns"),
    "n_tool_calls": ("fewer tool calls", "more tool calls"),
}
"""How a called amount reads from the candidate's side: (lower, higher)."""


def change_words(c: Comparison) -> str:
    """A called verdict as what the candidate is, with the effect: ``'worse'`` or ``'better'`` for a
    rate, ``'slower ×1.2'`` or ``'cheaper ×0.8'`` for an amount; ``'inconclusive'`` otherwise."""
    if c.verdict == "inconclusive":
        return "inconclusive"
    if c.metric not in AMOUNT_WORDS:
        return "better" if c.verdict == "a_better" else "worse"
    lower, higher = AMOUNT_WORDS[c.metric]
    higher_is_worse = c.verdict == "b_better"
    return f"{higher if higher_is_worse else lower} {effect_text(c)}"


def has_data(c: Comparison) -> bool:
    """Whether a comparison has anything to show: some paired task, a value on either side, and for
    an amount not 0 on both (nothing was counted: a scripted model's cost, an oracle's tokens)."""
    means = [m for m in (c.mean_a, c.mean_b) if not math.isnan(m)]
    if c.n_tasks == 0 or not means:
        return False
    return c.metric not in AMOUNT_WORDS or any(m != 0 for m in means)


def verdict_table(comparisons: Sequence[Comparison], arms: tuple[str, str] = ("baseline", "this run")) -> str:
    """metric | baseline | candidate | change [interval] | p | verdict, one row per shown metric with
    data; ``arms`` heads the two value columns."""
    rows = [
        f"| metric | {arms[0]} | {arms[1]} | change [95 % interval] | p | verdict |",
        "|---|---|---|---|---|---|",
    ]
    for c in comparisons:
        if c.metric not in SHOWN or not has_data(c):
            continue
        words = change_words(c)
        bold = f"**{words}**" if c.verdict != "inconclusive" else f"{words} (MDE {mde_text(c)})"
        bold += missingness_note(c)
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
    """A report's link: ``base`` with the report's path appended, or put where ``base`` says
    ``{path}`` (``https://ci.example/artifacts/7#{path}``); its path as it is without a base.

    Example: ``link(Path("reports/r1/run_report.html"), Path("reports/r1"), "https://host/r1")``
    -> ``"https://host/r1/run_report.html"``.
    """
    if not base:
        return page.as_posix()
    path = page.relative_to(folder).as_posix()
    return base.replace("{path}", path) if "{path}" in base else f"{base.rstrip('/')}/{path}"
