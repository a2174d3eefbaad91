"""``coder-eval history --tasks``: the tasks of the runs listed, with the evidence for each finding
(``coder_eval.analysis.stats.items``), and how to quarantine them."""

from __future__ import annotations

import warnings

import pandas as pd
from rich.markup import escape
from rich.table import Table

from coder_eval.analysis.answer.engine import pick_variants
from coder_eval.analysis.frames.load import Runs
from coder_eval.analysis.stats.items import (
    FLAKY_METHOD,
    constant_tasks,
    flaky_tasks,
    item_analysis,
    smaller_suite,
)
from coder_eval.cli.app import out

QUARANTINE = (
    "to quarantine a task, give it the tag 'quarantine' and leave it out: run --exclude-tags quarantine, "
    "or the experiment's compare: {exclude_tags: [quarantine]} (docs/history.md)"
)


def print_tasks(runs: Runs) -> None:
    """Flaky tasks, constant tasks, the item table and the smaller-suite estimate."""
    episodes = runs.episodes
    if episodes.empty:
        out.print("no episodes in the runs listed", highlight=False)
        return
    flaky = flaky_tasks(episodes)
    constant = constant_tasks(episodes)
    out.print(f"{episodes['run_id'].nunique()} runs, {episodes['task_id'].nunique()} tasks", highlight=False)
    table(f"flaky ({FLAKY_METHOD})", flaky[flaky["flaky"]], ["task_id", "config", "rates", "p_holm"])
    out.print(f"  {len(flaky)} task configurations tested (two runs or more)", highlight=False)
    table("never discriminating", constant, ["task_id", "outcome", "evidence"])
    items = item_analysis(episodes).sort_values("discrimination", na_position="first")
    table("item analysis (difficulty = 1 - pass rate; discrimination = corrected item-total r)", items,
          ["task_id", "pass_rate", "difficulty", "discrimination", "n_configs"])  # fmt: skip
    drop = set(constant["task_id"]) | set(flaky.loc[flaky["flaky"], "task_id"])
    print_smaller_suite(episodes, [t for t in episodes["task_id"].unique() if t not in drop])
    if drop:
        out.print(QUARANTINE, highlight=False, markup=False)


def print_smaller_suite(episodes: pd.DataFrame, keep: list[str]) -> None:
    """For the newest run with two variants: the tasks a suite like the kept ones needs."""
    newest_first = list(dict.fromkeys(map(str, episodes["run_id"])))[::-1]
    runs = [r for r in newest_first if episodes.loc[episodes["run_id"] == r, "variant_id"].nunique() > 1]
    if not runs:
        return
    one = episodes[episodes["run_id"] == runs[0]]
    baseline, candidate, _ = pick_variants(one)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        size = smaller_suite(one, candidate, baseline, keep)
    if size.required is None:
        out.print(
            f"run {runs[0]}, {candidate} vs {baseline}: no effect to size a smaller suite for",
            highlight=False,
        )
        return
    out.print(
        f"run {runs[0]}, {candidate} vs {baseline}: {size.n_tasks} tasks, effect {size.effect:+.3f}, power "
        f"{size.power:.2f}; the {size.n_kept} discriminating, steady tasks show {size.kept_effect:+.3f}: "
        f"a suite of such tasks needs {size.required} for the same power",
        highlight=False,
        markup=False,
    )


def table(title: str, frame: pd.DataFrame, columns: list[str]) -> None:
    """A titled table of ``columns`` (or that there are none)."""
    if frame.empty:
        out.print(f"{title}: none", highlight=False, markup=False)
        return
    shown = Table(*columns, title=escape(title), title_justify="left", box=None)
    for row in frame[columns].itertuples(index=False):
        shown.add_row(*(escape(f"{v:.3f}" if isinstance(v, float) else str(v)) for v in row))
    out.print(shown)
