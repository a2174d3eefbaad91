"""``coder-eval history --tasks``: the tasks of the runs listed, with the evidence for each finding
(``coder_eval.analysis.stats.items``), what the flaky test can see at this many runs, and how to
quarantine them."""

from __future__ import annotations

import math
import warnings

import pandas as pd
from rich.markup import escape
from rich.table import Table

from coder_eval.analysis.answer.engine import pick_variants
from coder_eval.analysis.frames.load import Runs
from coder_eval.analysis.stats.items import (
    FDR_METHOD,
    FLAKY_METHOD,
    HeldOut,
    constant_tasks,
    detectable,
    flaky_tasks,
    held_out,
    item_analysis,
    smaller_suite,
    steady_tasks,
)
from coder_eval.cli.app import out

QUARANTINE = (
    "to quarantine a task, give it the tag 'quarantine' and leave it out: run --exclude-tags quarantine, "
    "or the experiment's compare: {exclude_tags: [quarantine]} (docs/history.md)"
)
SMALLER_CAVEAT = (
    "it assumes new tasks behave like the kept ones; confirm on a fresh run before shrinking a suite"
)


def print_tasks(runs: Runs) -> None:
    """Flaky tasks (Holm, and at a 5 % FDR), constant tasks, the item table and the smaller suite."""
    episodes = runs.episodes
    if episodes.empty:
        out.print("no episodes in the runs listed", highlight=False)
        return
    flaky = flaky_tasks(episodes)
    constant = constant_tasks(episodes)
    say(f"{episodes['run_id'].nunique()} runs, {episodes['task_id'].nunique()} tasks")
    table(f"flaky ({FLAKY_METHOD})", flaky[flaky["flaky"]], ["task_id", "config", "rates", "p_holm"])
    more = flaky[flaky["flaky_fdr"] & ~flaky["flaky"]]
    also = f"also flaky at a 5 % false discovery rate ({FDR_METHOD}; a few may be chance)"
    table(also, more, ["task_id", "config", "rates", "p_fdr"])
    say(f"  {len(flaky)} task configurations tested (two runs or more)")
    print_detectable(episodes, len(flaky))
    table("never discriminating", constant, ["task_id", "outcome", "evidence"])
    items = item_analysis(episodes).sort_values("discrimination", na_position="first")
    table("item analysis (difficulty = 1 - pass rate; discrimination = corrected item-total r)", items,
          ["task_id", "pass_rate", "difficulty", "discrimination", "n_configs", "note"])  # fmt: skip
    print_smaller_suite(episodes)
    if set(constant["task_id"]) | set(flaky.loc[flaky["flaky"], "task_id"]):
        out.print(QUARANTINE, highlight=False, markup=False)


def print_detectable(episodes: pd.DataFrame, n_tested: int) -> None:
    """At this many runs and repeats: how many of a task's runs must fail before a list names it."""
    if not n_tested:
        return
    runs = int(episodes.groupby(["task_id", "variant_id"])["run_id"].nunique().median())
    repeats = int(episodes.groupby(["run_id", "task_id", "variant_id"]).size().median())
    found = detectable(runs, repeats, n_tested)
    size = f"  at {runs} runs of {repeats} repeats and {n_tested} tests"
    if found.failing_runs is None:
        say(f"{size}, no flaky task can be named: add runs")
        return
    say(
        f"{size}, a task is named only when {found.failing_runs} or more of its {runs} runs fail every "
        "repeat (fewer, or failing only some repeats, goes unseen)"
    )


def print_smaller_suite(episodes: pd.DataFrame) -> None:
    """How many tasks like the steady ones a suite needs, chosen on data that does not size it."""
    split = held_out(episodes)
    if not isinstance(split, HeldOut):
        say(f"smaller suite: not sized ({split})")
        return
    one = split.size
    baseline, candidate, _ = pick_variants(one)
    keep = [t for t in steady_tasks(split.choose) if t in set(one["task_id"])]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        size = smaller_suite(one, candidate, baseline, keep, split.how)
    if size.required is None:
        say(f"smaller suite ({split.how}): {candidate} vs {baseline}: no effect to size a smaller suite for")
        return
    say(
        f"smaller suite ({split.how}): {candidate} vs {baseline}, {size.n_tasks} tasks, effect "
        f"{size.effect:+.3f}, power {size.power:.2f}; the {size.n_kept} steady tasks show "
        f"{size.kept_effect:+.3f}: a suite of such tasks needs {size.required} for the same power; "
        + SMALLER_CAVEAT
    )


def say(text: str) -> None:
    out.print(text, highlight=False, markup=False, soft_wrap=True)


def table(title: str, frame: pd.DataFrame, columns: list[str]) -> None:
    """A titled table of ``columns`` (or that there are none); a missing number reads ``n/a``."""
    if frame.empty:
        out.print(f"{title}: none", highlight=False, markup=False)
        return
    shown = Table(*columns, title=escape(title), title_justify="left", box=None)
    for row in frame[columns].itertuples(index=False):
        shown.add_row(*(escape(cell(v)) for v in row))
    out.print(shown)


def cell(value: object) -> str:
    if isinstance(value, float):
        return "n/a" if math.isnan(value) else f"{value:.3f}"
    return str(value)
