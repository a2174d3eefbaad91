"""``compare`` two variants paired on tasks; ``compare_all`` every pair with Holm-adjusted p-values.

Verdicts are called only when the 95 % interval of the difference excludes 0 and p < 0.05. For
metrics where lower is better (tokens, cost, duration, turns, tool calls; see ``higher_is_better``)
``a_better`` means a is *lower*.

Example::

    c = compare(runs.episodes, "candidate", "baseline")
    c.diff, (c.ci_low, c.ci_high), c.p_value, c.verdict
"""

from __future__ import annotations

import itertools
from dataclasses import asdict, dataclass, replace
from typing import Literal

import numpy as np
import pandas as pd
from statsmodels.stats.multitest import multipletests

from coder_eval.analysis.intervals import N_RESAMPLES, NAN, SEED
from coder_eval.analysis.metrics import (
    check_variants,
    higher_is_better,
    metric_kind,
    metric_values,
    task_means,
    valid_episodes,
)
from coder_eval.analysis.paired import (
    ALPHA,
    PairedResult,
    RatioResult,
    paired_mde,
    paired_test,
    ratio_of_means,
)
from coder_eval.errors import AnalysisError

Verdict = Literal["a_better", "b_better", "inconclusive"]


@dataclass(frozen=True)
class Comparison:
    """Variant a vs variant b on one metric, paired on tasks (diff = a − b).

    Example: ``compare(df, "new", "old").verdict`` -> ``'inconclusive'``
    """

    metric: str
    a: str
    b: str
    n_tasks: int
    n_repeats: int
    n_excluded_tasks: int
    mean_a: float
    mean_b: float
    diff: float
    ci_low: float
    ci_high: float
    p_value: float
    test: str
    a_only: float
    """Binary: tasks where a's pass rate is higher (with one run: pairs a passed, b failed); else NaN."""
    b_only: float
    correlation: float
    mde: float
    verdict: Verdict
    method: str
    higher_is_better: bool
    ratio: float = NAN
    ratio_ci_low: float = NAN
    ratio_ci_high: float = NAN
    p_value_t: float = NAN


def compare(
    episodes: pd.DataFrame,
    a: str,
    b: str,
    metric: str = "passed",
    confidence: float = 0.95,
    n_resamples: int = N_RESAMPLES,
    seed: int = SEED,
) -> Comparison:
    """Paired comparison of variants ``a`` and ``b`` on the tasks both have valid episodes for.

    Tasks present in only one variant are excluded and counted (``n_excluded_tasks``).

    Example::

        compare(runs.episodes, "candidate", "baseline", metric="cost_usd").ratio
    """
    if a == b:
        raise AnalysisError(f"compare needs two different variants (got {a!r} twice)")
    check_variants(episodes, a, b)
    metric_values(episodes, metric)
    kind = metric_kind(metric, episodes if metric in episodes.columns else None)
    wide = paired_means(episodes, a, b, metric)
    both = wide.dropna()
    xa, xb = both[("mean", a)].to_numpy(float), both[("mean", b)].to_numpy(float)
    repeats = int(np.nanmax(both["n"].to_numpy(float))) if len(both) else 0  # K of the paired tasks only
    result = paired_test(xa, xb, kind, repeats, confidence, n_resamples, seed)
    ratio = (
        ratio_of_means(xa, xb, confidence, n_resamples, seed)
        if kind == "amount"
        else RatioResult(NAN, NAN, NAN)
    )
    counts = (len(both), repeats, len(wide) - len(both))
    return comparison(metric, a, b, counts, xa, xb, result, ratio, kind == "binary")


def comparison(
    metric: str,
    a: str,
    b: str,
    counts: tuple[int, int, int],
    xa: np.ndarray,
    xb: np.ndarray,
    result: PairedResult,
    ratio: RatioResult,
    binary: bool,
) -> Comparison:
    """The Comparison record; counts are (n_tasks, n_repeats, n_excluded_tasks)."""
    d = xa - xb
    better = higher_is_better(metric)
    return Comparison(
        metric, a, b, *counts, mean_a=mean(xa), mean_b=mean(xb), diff=result.diff, ci_low=result.low,
        ci_high=result.high, p_value=result.p_value, test=result.test,
        a_only=float((d > 0).sum()) if binary else NAN, b_only=float((d < 0).sum()) if binary else NAN,
        correlation=correlation(xa, xb), mde=paired_mde(d),
        verdict=verdict(result.diff, result.low, result.high, result.p_value, better), method=result.method,
        higher_is_better=better, ratio=ratio.ratio, ratio_ci_low=ratio.low, ratio_ci_high=ratio.high,
        p_value_t=result.p_value_t,
    )  # fmt: skip


def paired_means(episodes: pd.DataFrame, a: str, b: str, metric: str) -> pd.DataFrame:
    """Task × (mean, n) × variant, over valid episodes; NaN where a variant lacks the task."""
    chosen = valid_episodes(episodes[episodes["variant_id"].isin([a, b])])
    means = task_means(chosen, metric)
    wide = means.pivot(index="task_id", columns="variant_id", values=["mean", "n"])
    return wide.reindex(columns=pd.MultiIndex.from_product([["mean", "n"], [a, b]]))


def mean(x: np.ndarray) -> float:
    """Mean, NaN when empty (without a warning)."""
    return float(np.mean(x)) if len(x) else NAN


def correlation(xa: np.ndarray, xb: np.ndarray) -> float:
    """Pearson correlation of the two arms' task means; NaN when either arm is constant."""
    if len(xa) < 2 or np.ptp(xa) == 0 or np.ptp(xb) == 0:
        return NAN
    return float(np.corrcoef(xa, xb)[0, 1])


def verdict(diff: float, low: float, high: float, p_value: float, higher_better: bool = True) -> Verdict:
    """``a_better`` / ``b_better`` when the interval excludes 0 and p < 0.05, else ``inconclusive``.

    Example: ``verdict(0.2, 0.05, 0.35, 0.01)`` -> ``'a_better'``
    """
    if not (p_value < ALPHA and (low > 0 or high < 0)):
        return "inconclusive"
    return "a_better" if (diff > 0) == higher_better else "b_better"


def comparisons_frame(comparisons: list[Comparison]) -> pd.DataFrame:
    """Comparison records as a frame, one row each (the input of ``plots.forest_plot``).

    Example: ``comparisons_frame([compare(df, "a", "b", m) for m in ("passed", "cost_usd")])``
    """
    columns = list(Comparison.__dataclass_fields__)
    return pd.DataFrame([asdict(c) for c in comparisons], columns=columns)


def compare_all(
    episodes: pd.DataFrame,
    metric: str = "passed",
    confidence: float = 0.95,
    n_resamples: int = N_RESAMPLES,
    seed: int = SEED,
) -> pd.DataFrame:
    """Every pair of variants; ``p_adjusted`` is Holm over all pairs and sets the verdict.

    Example: ``compare_all(runs.episodes)[["a", "b", "diff", "p_adjusted", "verdict"]]``
    """
    variants = [str(v) for v in pd.unique(episodes["variant_id"].dropna())]
    if len(variants) < 2:
        raise AnalysisError(f"compare_all needs at least two variants (found {variants})")
    comparisons = [
        compare(episodes, a, b, metric, confidence, n_resamples, seed)
        for a, b in itertools.combinations(variants, 2)
    ]
    adjusted = holm([c.p_value for c in comparisons])
    rows = [
        replace(c, verdict=verdict(c.diff, c.ci_low, c.ci_high, p, c.higher_is_better))
        for c, p in zip(comparisons, adjusted, strict=True)
    ]
    frame = comparisons_frame(rows)
    frame.insert(list(frame.columns).index("p_value") + 1, "p_adjusted", adjusted)
    return frame


def holm(p_values: list[float]) -> list[float]:
    """Holm-adjusted p-values (``multipletests(method="holm")``); NaN stays NaN and is not counted.

    Example: ``holm([0.01, 0.04, 0.03])`` -> ``[0.03, 0.06, 0.06]``
    """
    p = np.asarray(p_values, dtype=float)
    out = np.full(len(p), NAN)
    finite = ~np.isnan(p)
    if finite.any():
        out[finite] = multipletests(p[finite], method="holm")[1]
    return [float(x) for x in out]
