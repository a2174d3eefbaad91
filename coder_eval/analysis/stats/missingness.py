"""Invalid episodes in a comparison: how many each arm has and why, and the worst and best cases
that bound what they could have been.

An invalid episode measured nothing, so it is left out of every rate and mean; but missingness that
differs between arms is informative (an arm that is invalid exactly when it would fail looks better).
So a comparison counts each arm's invalid episodes by their recorded cause (``invalid_counts``) and,
when there are any, computes the comparison again on the two **extreme** completions of the data
(``extremes``): every invalid episode of ``a`` at its worst for ``a`` and every invalid episode of
``b`` at its best, and the other way round. For pass rates and scores the worst is a failure (0) and
the best a pass (1); for amounts, where lower is better, the worst is the largest value seen on the
episode's task (either arm, valid episodes) and the best the smallest (an invalid episode is assumed
to cost no more, and no less, than the task's episodes did). ``compare`` then calls a verdict only when
the observed data and both extremes call it the same way (``bound_p``), and shows the hull of the three
intervals as the verdict's.

Example::

    invalid_counts(episodes, "with_skill")           # {'provider': 2, 'grader': 1}
    counts_text({'provider': 2, 'grader': 1})       # '3 (provider 2, grader 1)'
    worst_for_a, best_for_a = extremes(episodes, "with_skill", "baseline", "passed")
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from coder_eval.analysis.stats.metrics import (
    MetricKind,
    check_columns,
    higher_is_better,
    is_invalid,
    metric_values,
)

if TYPE_CHECKING:
    from coder_eval.analysis.stats.comparison import Comparison
    from coder_eval.analysis.stats.paired import PairedResult

UNRECORDED = "unrecorded"
"""The cause shown for an invalid episode whose run recorded none (made before causes were kept)."""
INTERRUPTED = "interrupted"
"""The cause shown for an episode with no ``episode_end`` (the run stopped while it ran)."""
CAUSE_ORDER = ("harness", "provider", "grader", "agent", INTERRUPTED, UNRECORDED)


def invalid_causes(episodes: pd.DataFrame) -> pd.Series:
    """The cause of each invalid episode as recorded (``episode_end.invalid_cause``), ``interrupted``
    for an episode without an end, ``unrecorded`` otherwise; indexed like the invalid rows.

    Example: ``invalid_causes(runs.episodes).value_counts()``
    """
    invalid = episodes[is_invalid(episodes)]
    recorded = (
        invalid["invalid_cause"]
        if "invalid_cause" in invalid.columns
        else pd.Series(None, index=invalid.index)
    )
    status = invalid["status"] if "status" in invalid.columns else pd.Series(None, index=invalid.index)
    fallback = np.where(status.astype(object) == "interrupted", INTERRUPTED, UNRECORDED)
    known = recorded.astype(object).where(recorded.notna() & (recorded.astype(object) != ""))
    return known.fillna(pd.Series(fallback, index=invalid.index)).astype(str)


def invalid_counts(episodes: pd.DataFrame, variant: str) -> dict[str, int]:
    """One variant's invalid episodes by cause, in a fixed order (empty when it has none).

    Example: ``invalid_counts(episodes, "with_skill")`` -> ``{'provider': 2, 'grader': 1}``
    """
    check_columns(episodes, ["variant_id", "outcome"])
    mine = (episodes["variant_id"].to_numpy(object) == variant) & (
        episodes["outcome"].to_numpy(object) == "invalid"
    )
    if not mine.any():
        return {}
    causes = invalid_causes(episodes[mine]).value_counts()
    ordered = [c for c in CAUSE_ORDER if c in causes.index] + sorted(set(causes.index) - set(CAUSE_ORDER))
    return {str(c): int(causes[c]) for c in ordered}


def counts_text(counts: Mapping[str, int]) -> str:
    """``'3 (provider 2, grader 1)'``; ``'0'`` when there are none."""
    total = sum(counts.values())
    return f"{total} ({causes_text(counts)})" if total else "0"


def causes_text(counts: Mapping[str, int]) -> str:
    """``'provider 2, grader 1'``."""
    return ", ".join(f"{cause} {n}" for cause, n in counts.items() if n)


def arms_text(a: str, counts_a: Mapping[str, int], b: str, counts_b: Mapping[str, int]) -> str:
    """``'invalid episodes excluded: with_skill 3 (provider 2, grader 1), baseline 0'``; ``''`` when
    neither arm has any."""
    if not sum(counts_a.values()) and not sum(counts_b.values()):
        return ""
    return f"invalid episodes excluded: {a} {counts_text(counts_a)}, {b} {counts_text(counts_b)}"


def extremes(
    episodes: pd.DataFrame, a: str, b: str, metric: str, kind: MetricKind = "binary"
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(worst case for ``a``, best case for ``a``): the episodes of ``a`` and ``b`` with every invalid
    one made valid at its worst for its own arm (``a``'s in the first, ``b``'s in the second) and the
    other arm's at its best. Episodes of a task where nothing valid was measured keep no amount (NaN)
    and so still drop out."""
    pair = episodes[episodes["variant_id"].isin([a, b])]
    invalid = is_invalid(pair).to_numpy()
    values = metric_values(pair, metric).to_numpy(float)
    low, high = _range(pair, values, invalid, kind != "amount")
    worst, best = (low, high) if higher_is_better(metric) else (high, low)
    of_a = (pair["variant_id"] == a).to_numpy()
    frames = []
    for a_value, b_value in ((worst, best), (best, worst)):
        filled = np.where(of_a, a_value, b_value)
        frames.append(_completed(pair, metric, np.where(invalid, filled, values), invalid))
    return frames[0], frames[1]


def _range(
    pair: pd.DataFrame, values: np.ndarray, invalid: np.ndarray, bounded: bool
) -> tuple[np.ndarray, np.ndarray]:
    """Per episode, the lowest and highest value its task could take: [0, 1] for pass rates and
    scores, the task's observed range (valid episodes of both arms) for amounts."""
    if bounded:
        return np.zeros(len(pair)), np.ones(len(pair))
    seen = pd.Series(np.where(invalid, np.nan, values), index=pair.index).groupby(pair["task_id"])
    return seen.transform("min").to_numpy(float), seen.transform("max").to_numpy(float)


def _completed(pair: pd.DataFrame, metric: str, values: np.ndarray, invalid: np.ndarray) -> pd.DataFrame:
    """The episodes with ``values`` as the metric and the invalid ones counted as measured."""
    frame = pair.copy()
    if metric == "passed":
        passed = values >= 0.5
        frame["passed"] = pd.array(passed, dtype="boolean")
        frame.loc[np.isnan(values), "passed"] = pd.NA
        frame["outcome"] = np.where(invalid, np.where(passed, "pass", "fail"), frame["outcome"])
        return frame
    frame[metric] = values
    frame["outcome"] = np.where(invalid, "fail", frame["outcome"])
    return frame


def bound_p(effects: Sequence[float], p_values: Sequence[float]) -> float:
    """The p-value of "every completion calls the same direction": the largest of the p-values when
    the effects (observed, worst and best case, on the verdict's scale) share one strict sign, else
    1 (no level makes the hull of their intervals exclude "no difference").

    Example: ``bound_p([0.2, 0.1, 0.3], [0.01, 0.04, 0.002])`` -> ``0.04``
    """
    if any(math.isnan(x) for x in (*effects, *p_values)):
        return 1.0
    if not (all(e > 0 for e in effects) or all(e < 0 for e in effects)):
        return 1.0
    return float(max(p_values))


def bounds_note(
    c: Comparison, kind: MetricKind, results: Sequence[PairedResult], p_bounds: float, why: str = ""
) -> str:
    """What the invalid episodes do to the verdict, in words: it survives their worst case, or it is
    not called because they could explain it (``''`` when the test alone calls nothing)."""
    observed = results[0]
    if not observed.p_value < 1 - c.confidence:
        return ""
    if why:
        return f"not called: the invalid episodes could explain it ({why})"
    effect_up = observed.ratio > 1 if observed.basis == "ratio" else observed.diff > 0
    favoured_a = effect_up == c.higher_is_better
    worst = results[1] if favoured_a else results[2]
    winner, loser = (c.a, c.b) if favoured_a else (c.b, c.a)
    worst_word, best_word = EXTREME_WORDS[kind]
    case = f"{winner}'s invalid episodes counted as {worst_word} and {loser}'s as {best_word}"
    if p_bounds < 1 - c.confidence:
        return f"survives the invalid episodes at their worst ({case}: p = {worst.p_value:.3g})"
    return f"not called: the invalid episodes could explain it ({case}: p = {worst.p_value:.3g})"


EXTREME_WORDS: dict[str, tuple[str, str]] = {
    "binary": ("failures", "passes"),
    "proportion": ("score 0", "score 1"),
    "amount": ("the largest value seen on their task", "the smallest"),
}
"""How the worst and best case of an invalid episode read, by metric kind."""
