"""What a run could have detected, and how many tasks a conclusive answer needs: the compare report's
planning section, from the declared comparison, never failing on an ordinary run.

One task, no spread, or an observed effect at the edge of the scale are ordinary outcomes: each
cell that cannot be computed is NaN and the ``note`` says why (``power.mde`` and friends raise on
such pilots, which is right for a caller asking one question, wrong for a report asking all).

Example::

    plan = planning(runs_episodes, verdicts(runs))
    plan.mde, plan.power_observed, plan.table, plan.note
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import pandas as pd

from coder_eval.analysis.answer.engine import Verdicts
from coder_eval.analysis.stats.compare import Comparison
from coder_eval.analysis.stats.intervals import NAN
from coder_eval.analysis.stats.power import mde, power_at, required_tasks
from coder_eval.errors import AnalysisError


@dataclass(frozen=True)
class Planning:
    """The MDE at the run's size, the power it had for the effect observed, and tasks needed per K."""

    metric: str
    on_ratio: bool
    mde: float
    power_observed: float
    table: pd.DataFrame
    notes: list[str] = field(default_factory=list)

    @property
    def note(self) -> str:
        """Why some cells are undefined ("" when none is)."""
        return "; ".join(dict.fromkeys(self.notes))


def planning(verdicts: Verdicts, metric: str | None = None) -> Planning | None:
    """Planning on ``metric`` (default: the primary) of the declared comparison; None without one.

    Example: ``planning(verdicts(runs)).table``
    """
    if not verdicts.available:
        return None
    c = verdicts.of(metric) if metric else verdicts.primary
    assert c is not None
    episodes, notes = verdicts.selection.episodes, []
    on_ratio = c.basis == "ratio"

    def safely(compute: object, *args: object, **kwargs: object) -> float:
        try:
            return float(compute(episodes, c.a, c.b, *args, metric=c.metric, **kwargs))  # type: ignore[operator]
        except (AnalysisError, ValueError) as exc:  # ValueError: a solver refusing an extreme effect
            notes.append(str(exc))
            return NAN

    observed = c.ratio if on_ratio else c.diff
    effect_defined = not math.isnan(observed) and observed not in (0.0, 1.0 if on_ratio else 0.0)
    observed_power = safely(power_at, observed) if effect_defined else NAN
    if not effect_defined:
        notes.append("no effect was observed, so there is none to compute the power for")
    rows = []
    for k in repeats_to_plan(c):
        row: dict[str, object] = {"repeats": k, f"mde at {c.n_tasks} tasks": safely(mde, n_repeats=k)}
        for e in effects(c, observed if effect_defined else NAN):
            label = f"tasks for {'ratio' if on_ratio else 'δ'} = {e:.3g}"
            row[label] = safely(required_tasks, e, n_repeats=k)
        rows.append(row)
    at_run = safely(mde)
    if c.mde_note:
        notes.append(c.mde_note)
    return Planning(
        c.metric, on_ratio, at_run, observed_power, pd.DataFrame(rows).set_index("repeats"), notes
    )


def repeats_to_plan(c: Comparison) -> list[int]:
    """1, 3, 5 and the run's own K (another K needs repeats in the pilot)."""
    return sorted({1, 3, 5, c.n_repeats}) if c.n_repeats >= 2 else [max(c.n_repeats, 1)]


def effects(c: Comparison, observed: float) -> list[float]:
    """Effects to plan for: a few round ones on the verdict's scale, and the one observed."""
    if c.basis == "ratio":
        chosen = [1.1, 1.25, 1.5]
        if not math.isnan(observed) and observed > 0:
            chosen.append(max(observed, 1 / observed))
    elif c.metric in ("passed", "score"):
        chosen = [0.05, 0.1, 0.2]
        if not math.isnan(observed):
            chosen.append(min(abs(observed), 1.0))
    else:
        chosen = [f * abs(c.mean_b) for f in (0.1, 0.2, 0.5) if not math.isnan(c.mean_b)]
        if not math.isnan(observed):
            chosen.append(abs(observed))
    return sorted({round(e, 12) for e in chosen} - {0.0, 1.0 if c.basis == "ratio" else 0.0})
