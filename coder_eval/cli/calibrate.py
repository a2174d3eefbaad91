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

from coder_eval.cli.app import app, console, out
from coder_eval.errors import AnalysisError, InputError

if TYPE_CHECKING:
    import pandas as pd

    from coder_eval.analysis.judging.calibration import JudgeCalibration


@app.command()
def calibrate(
    run_dirs: Annotated[list[Path], typer.Argument(help="Run directories whose judges were labelled.")],
    labels: Annotated[Path, typer.Option(help="The labels file (.jsonl or .csv; docs/statistics.md).")],
) -> None:
    """Agreement of each judged criterion with people's labels, and which judges are fit to gate on."""
    from coder_eval.analysis import load_runs
    from coder_eval.analysis.judging.calibration import KAPPA_METHOD, MIN_ITEMS, MIN_KAPPA, calibrate
    from coder_eval.analysis.judging.labels import read_labels

    read = read_labels(labels)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        runs = load_runs(run_dirs)
    try:
        found = calibrate(runs.criteria, read)
    except AnalysisError as exc:  # the labels do not fit the runs: a usage error
        raise InputError(f"{labels}: {exc}; {matching_hint(read, runs.criteria)}") from exc
    table = Table("criterion", "n", "agreement", "kappa [95 %]", "judge+/people+", "judge+/people-",
                  "judge-/people+", "judge-/people-", "bias", "raters (alpha)", "fit to gate",
                  title=f"judges against people (kappa interval: {KAPPA_METHOD})")  # fmt: skip
    for j in found.judges:
        c = j.confusion
        table.add_row(*map(escape, (
            j.criterion_id, str(j.n_items), f"{j.agreement:.0%}",
            kappa_cell(j),
            *(str(c[k]) for k in c), "-" if math.isnan(j.bias) else f"{j.bias:+.2f}",
            str(j.n_raters) + ("" if math.isnan(j.raters_alpha) else f" ({j.raters_alpha:.2f})"),
            "yes" if j.fit else "no",
        )))  # fmt: skip
    out.print(table)
    for j in found.judges:
        out.print(f"  {j.criterion_id}: {j.why}" + (f"; {j.ties} tied votes left out" if j.ties else ""),
                  highlight=False, markup=False)  # fmt: skip
    out.print(
        f"rule: at least {MIN_ITEMS} labelled episodes and kappa's lower bound >= {MIN_KAPPA}",
        highlight=False,
    )
    if found.unmatched:
        console.print(
            f"{found.unmatched} labels name no graded criterion of these runs; left out", highlight=False
        )


def kappa_cell(j: JudgeCalibration) -> str:
    """``0.81 [0.62, 0.93]``; ``undefined`` when kappa has no value (the line below says why)."""
    if math.isnan(j.kappa):
        return "undefined"
    if math.isnan(j.kappa_low):
        return f"{j.kappa:.2f} [undefined]"
    return f"{j.kappa:.2f} [{j.kappa_low:.2f}, {j.kappa_high:.2f}]"


def matching_hint(labels: pd.DataFrame, criteria: pd.DataFrame) -> str:
    """What the labels name against what the runs graded, for a label set that matches nothing."""
    first = labels.iloc[0]
    graded = sorted(map(str, criteria["criterion_id"].dropna().unique()))[:5] or ["none"]
    return (
        f"the first label names episode {first['episode_id']!r}, criterion {first['criterion_id']!r}; "
        f"the runs graded criteria {', '.join(graded)} on {criteria['episode_id'].nunique()} episodes"
    )
