"""Many comparisons at once, with Holm-adjusted p-values: every pair of variants, or many metrics.

The verdicts use the adjusted p-values, and each verdict's interval (``verdict_ci_low``,
``verdict_ci_high``) is the test inverted at the level of its Holm step, so it still excludes "no
difference" exactly when the adjusted verdict is called: with m comparisons ordered by p, the j-th
is rejected when p_(i) < α / (m − i + 1) for every i ≤ j; its interval is at level α / (m − j + 1),
and every comparison from the first one not rejected on gets that step's level
(``verdict_confidence``). The difference and ratio columns (``ci_low``, ``ratio_ci_low``, ...) stay
95 % intervals of each comparison on its own, which the ``ci_adjustment`` column says.

Example::

    compare_all(runs.episodes)                                        # every pair, one metric
    compare_metrics(runs.episodes, "candidate", "baseline", ["passed", "cost_usd"])
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import replace

import numpy as np
import pandas as pd

from coder_eval.analysis.frames.load import Runs
from coder_eval.analysis.stats.compare import Comparison, compare, comparisons_frame, verdict_of
from coder_eval.analysis.stats.estimate import Estimand
from coder_eval.analysis.stats.headline_tasks import headline_of
from coder_eval.analysis.stats.intervals import N_RESAMPLES, NAN, SEED
from coder_eval.analysis.stats.metrics import renumbered
from coder_eval.analysis.stats.paired import ALPHA
from coder_eval.errors import AnalysisError

UNADJUSTED = "unadjusted (95 % each)"


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm-adjusted p-values, as ``multipletests(method="holm")`` gives them (a test checks they are
    equal); NaN stays NaN and is not counted. Computed here because statsmodels' Holm runs a full
    garbage collection on every call (a tenth of a second in a busy process, on every verdict).

    Example: ``holm([0.01, 0.04, 0.03])`` -> ``[0.03, 0.06, 0.06]``
    """
    p = np.asarray(p_values, dtype=float)
    out = np.full(len(p), NAN)
    finite = np.flatnonzero(~np.isnan(p))
    if len(finite):
        order = finite[np.argsort(p[finite], kind="mergesort")]
        steps = p[order] * np.arange(len(order), 0, -1)
        out[order] = np.minimum(np.maximum.accumulate(steps), 1.0)
    return [float(x) for x in out]


def holm_levels(p_values: Sequence[float], alpha: float = ALPHA) -> list[float]:
    """The level of each comparison's verdict interval under Holm (NaN where p is NaN).

    Example: ``holm_levels([0.01, 0.04, 0.03])`` -> ``[0.0167, 0.025, 0.025]``
    """
    p = np.asarray(p_values, dtype=float)
    levels = np.full(len(p), NAN)
    finite = np.flatnonzero(~np.isnan(p))
    stopped: float | None = None
    for rank, index in enumerate(finite[np.argsort(p[finite], kind="stable")]):
        step = alpha / (len(finite) - rank)
        if stopped is None and not p[index] < step:
            stopped = step
        levels[index] = step if stopped is None else stopped
    return [float(x) for x in levels]


def adjusted(
    comparisons: list[Comparison], at_level: Callable[[Comparison, float], Comparison]
) -> pd.DataFrame:
    """``holm_adjusted`` as a frame, with the ``ci_adjustment`` column."""
    frame = comparisons_frame(holm_adjusted(comparisons, at_level))
    frame["ci_adjustment"] = UNADJUSTED
    return frame


def holm_adjusted(
    comparisons: list[Comparison], at_level: Callable[[Comparison, float], Comparison]
) -> list[Comparison]:
    """The comparisons with ``p_adjusted`` (Holm over all of them, of the p each verdict rests on:
    ``p_verdict``) setting each verdict, and each verdict's interval recomputed at its Holm step's
    level by ``at_level``."""
    p_adjusted = holm([c.p_verdict for c in comparisons])
    levels = holm_levels(
        [c.p_verdict for c in comparisons], 1 - comparisons[0].confidence if comparisons else ALPHA
    )
    rows = []
    for c, p, level in zip(comparisons, p_adjusted, levels, strict=True):
        if not np.isnan(level):
            again = at_level(c, level)
            c = replace(
                c, verdict_ci_low=again.verdict_ci_low, verdict_ci_high=again.verdict_ci_high,
                verdict_method=f"{again.verdict_method}, at the Holm step's level",
                verdict_confidence=1 - level,
            )  # fmt: skip
        rows.append(replace(c, p_adjusted=p, verdict=verdict_of(c, p)))
    return rows


def recompute(
    episodes: pd.DataFrame, n_resamples: int, seed: int
) -> Callable[[Comparison, float], Comparison]:
    """``at_level`` for ``adjusted``: the same comparison with its interval at level ``level``."""

    def at_level(c: Comparison, level: float) -> Comparison:
        return compare(
            episodes, c.a, c.b, c.metric, 1 - level, n_resamples, seed, c.estimand,  # type: ignore[arg-type]
            planned=False,
        )  # fmt: skip

    return at_level


def compare_all(
    episodes: pd.DataFrame,
    metric: str = "passed",
    confidence: float = 0.95,
    n_resamples: int = N_RESAMPLES,
    seed: int = SEED,
    estimand: Estimand = "population",
) -> pd.DataFrame:
    """Every pair of variants; ``p_adjusted`` is Holm over all pairs and sets the verdict.

    Example: ``compare_all(runs.episodes)[["a", "b", "diff", "p_adjusted", "verdict"]]``
    """
    episodes = renumbered(episodes)
    variants = [str(v) for v in pd.unique(episodes["variant_id"].dropna())]
    if len(variants) < 2:
        raise AnalysisError(f"compare_all needs at least two variants (found {variants})")
    return adjusted(
        [
            compare(episodes, a, b, metric, confidence, n_resamples, seed, estimand)
            for a, b in itertools.combinations(variants, 2)
        ],
        recompute(episodes, n_resamples, seed),
    )


def compare_metrics(
    episodes: pd.DataFrame | Runs,
    a: str,
    b: str,
    metrics: Sequence[str],
    confidence: float = 0.95,
    n_resamples: int = N_RESAMPLES,
    seed: int = SEED,
    estimand: Estimand = "population",
) -> pd.DataFrame:
    """``a`` vs ``b`` on several metrics; ``p_adjusted`` is Holm over the metrics and sets the verdict.
    Given loaded runs, on their headline tasks (as ``compare``), as the reports with ``adjust=holm``.

    Example: ``compare_metrics(runs, "new", "old", ["passed", "score", "cost_usd"])``
    """
    if not metrics:
        raise AnalysisError("compare_metrics needs at least one metric")
    if isinstance(episodes, Runs):
        episodes = headline_of(episodes).episodes
    episodes = renumbered(episodes)
    return adjusted(
        [compare(episodes, a, b, m, confidence, n_resamples, seed, estimand) for m in metrics],
        recompute(episodes, n_resamples, seed),
    )
