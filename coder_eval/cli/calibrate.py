"""``coder-eval calibrate``: each judged criterion of some runs against people's labels
(``coder_eval.analysis.judging.calibration``), and which judges are fit to gate on.

Example::

    coder-eval calibrate runs/latest --labels labels.jsonl
"""

from __future__ import annotations

import math
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape
from rich.table import Table

from coder_eval.cli.app import app, console, out, whole
from coder_eval.errors import AnalysisError, InputError

if TYPE_CHECKING:
    import pandas as pd


@app.command()
def calibrate(
    run_dirs: Annotated[list[Path], typer.Argument(help="Run directories whose judges were labelled.")],
    labels: Annotated[Path, typer.Option(help="The labels file (.jsonl or .csv; docs/statistics.md).")],
) -> None:
    """Agreement of each judged criterion with people's labels, and which judges are fit to gate on."""
    from coder_eval.analysis import load_runs
    from coder_eval.analysis.judging.calibration import (
        KAPPA_METHOD,
        MIN_ITEMS,
        MIN_KAPPA,
        MIN_MINORITY,
        calibrate,
    )
    from coder_eval.analysis.judging.labels import read_labels

    read = read_labels(labels)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        runs = load_runs(run_dirs)
    try:
        found = calibrate(runs.criteria, read)
    except AnalysisError as exc:  # the labels do not fit the runs: a usage error
        raise InputError(f"{labels}: {exc}; {matching_hint(read, runs.criteria)}") from exc
    ids = [j.criterion_id for j in found.judges]
    table = Table(whole("criterion", ids), "n", "agreement", "kappa [95 %]", "judge+/people+",
                  "judge+/people-", "judge-/people+", "judge-/people-", "bias", "raters (alpha)",
                  "fit to gate",
                  title=f"judges against people (kappa interval: {KAPPA_METHOD})")  # fmt: skip
    for j in found.judges:
        c = j.confusion
        table.add_row(*map(escape, (
            j.criterion_id, str(j.n_items), "n/a" if math.isnan(j.agreement) else f"{j.agreement:.0%}",
            kappa_text(j.kappa, j.kappa_low, j.kappa_high),
            *(str(c[k]) for k in c), "-" if math.isnan(j.bias) else f"{j.bias:+.2f}",
            str(j.n_raters) + alpha_text(j.raters_alpha, j.raters_note),
            "yes" if j.fit else "no",
        )))  # fmt: skip
    out.print(table)
    for j in found.judges:
        ties = f"; {j.ties} tied votes left out" if j.ties else ""
        raters = f"; raters: {j.raters_note}" if j.raters_note and j.raters_note != "one rater" else ""
        out.print(f"  {j.criterion_id}: {j.why}{ties}{raters}", highlight=False, markup=False)
    out.print(
        f"rule: at least {MIN_ITEMS} labelled episodes, {MIN_MINORITY} of each of the people's verdicts, "
        f"and kappa's lower bound >= {MIN_KAPPA}",
        highlight=False,
    )
    if found.unmatched:
        console.print(
            f"{found.unmatched} labels name no graded criterion of these runs; left out", highlight=False
        )


def kappa_text(kappa: float, low: float, high: float) -> str:
    """``'0.71 [0.52, 0.86]'``, or ``undefined`` and why in brief (the line under the table says it
    in full): ``'undefined (one verdict)'``, ``'undefined (nothing graded)'``."""
    if math.isnan(kappa):
        return "undefined (one verdict)" if not math.isnan(low) else "undefined (nothing graded)"
    return f"{kappa:.2f} [{low:.2f}, {high:.2f}]"


def alpha_text(alpha: float, note: str) -> str:
    """`` (0.74)``, `` (n/a)`` (the reason printed under the table), or nothing with one rater."""
    if not math.isnan(alpha):
        return f" ({alpha:.2f})"
    return "" if note == "one rater" else " (n/a)"


def matching_hint(labels: pd.DataFrame, criteria: pd.DataFrame) -> str:
    """What the labels name against what the runs graded, for a label set that matches nothing."""
    first = labels.iloc[0]
    graded = sorted(map(str, criteria["criterion_id"].dropna().unique()))[:5] or ["none"]
    return (
        f"the first label names episode {first['episode_id']!r}, criterion {first['criterion_id']!r}; "
        f"the runs graded criteria {', '.join(graded)} on {criteria['episode_id'].nunique()} episodes"
    )
