"""Many comparisons at once, with Holm-adjusted p-values: every pair of variants, or many metrics.

The verdicts use the adjusted p-values; the intervals are not adjusted (each is a 95 % interval of
its own comparison), which the ``ci_adjustment`` column says.

Example::

    compare_all(runs.episodes)                                        # every pair, one metric
    compare_metrics(runs.episodes, "candidate", "baseline", ["passed", "cost_usd"])
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import pandas as pd
from statsmodels.stats.multitest import multipletests

from coder_eval.analysis.compare import Comparison, compare, comparisons_frame, verdict_of
from coder_eval.analysis.estimate import Estimand
from coder_eval.analysis.intervals import N_RESAMPLES, NAN, SEED
from coder_eval.analysis.metrics import renumbered
from coder_eval.errors import AnalysisError

UNADJUSTED = "unadjusted (95 % each)"


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm-adjusted p-values (``multipletests(method="holm")``); NaN stays NaN and is not counted.

    Example: ``holm([0.01, 0.04, 0.03])`` -> ``[0.03, 0.06, 0.06]``
    """
    p = np.asarray(p_values, dtype=float)
    out = np.full(len(p), NAN)
    finite = ~np.isnan(p)
    if finite.any():
        out[finite] = multipletests(p[finite], method="holm")[1]
    return [float(x) for x in out]


def adjusted_frame(comparisons: list[Comparison]) -> pd.DataFrame:
    """The comparisons with ``p_adjusted`` (Holm over all of them) setting each verdict."""
    adjusted = holm([c.p_value for c in comparisons])
    rows = [replace(c, verdict=verdict_of(c, p)) for c, p in zip(comparisons, adjusted, strict=True)]
    frame = comparisons_frame(rows)
    frame.insert(list(frame.columns).index("p_value") + 1, "p_adjusted", adjusted)
    frame["ci_adjustment"] = UNADJUSTED
    return frame


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
    return adjusted_frame(
        [
            compare(episodes, a, b, metric, confidence, n_resamples, seed, estimand)
            for a, b in itertools.combinations(variants, 2)
        ]
    )


def compare_metrics(
    episodes: pd.DataFrame,
    a: str,
    b: str,
    metrics: Sequence[str],
    confidence: float = 0.95,
    n_resamples: int = N_RESAMPLES,
    seed: int = SEED,
    estimand: Estimand = "population",
) -> pd.DataFrame:
    """``a`` vs ``b`` on several metrics; ``p_adjusted`` is Holm over the metrics and sets the verdict.

    Example: ``compare_metrics(runs.episodes, "new", "old", ["passed", "score", "cost_usd"])``
    """
    if not metrics:
        raise AnalysisError("compare_metrics needs at least one metric")
    episodes = renumbered(episodes)
    return adjusted_frame(
        [compare(episodes, a, b, m, confidence, n_resamples, seed, estimand) for m in metrics]
    )
