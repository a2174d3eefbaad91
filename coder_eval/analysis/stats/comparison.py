"""The record of one paired comparison (``Comparison``), its verdict, and the helpers the methods
that make one share (``compare``'s paired test, ``mixed``'s model).

Example: ``verdict(0.2, 0.05, 0.35, 0.01)`` -> ``'a_better'``.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Literal

import numpy as np
import pandas as pd

from coder_eval.analysis.stats.intervals import NAN
from coder_eval.analysis.stats.metrics import is_invalid, metric_values
from coder_eval.analysis.stats.paired import ALPHA

Verdict = Literal["a_better", "b_better", "inconclusive"]
Method = Literal["paired", "mixed"]


@dataclass(frozen=True)
class Comparison:
    """Variant a vs variant b on one metric, paired on tasks (diff = a − b, ratio = a / b).

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
    """Smallest |diff| the test calls with 80 % power at n_tasks; NaN when the verdict rests on the ratio."""
    verdict: Verdict
    method: str
    higher_is_better: bool
    ratio: float = NAN
    """Amounts: geometric mean over tasks of mean_a,i / mean_b,i."""
    ratio_ci_low: float = NAN
    ratio_ci_high: float = NAN
    p_value_t: float = NAN
    ratio_method: str = ""
    basis: str = "difference"
    """What the verdict rests on: ``difference`` or ``ratio``."""
    mde_ratio: float = NAN
    """Amounts on the ratio: the smallest factor (≥ 1, either way) called with 80 % power."""
    min_tasks: int = 0
    """No verdict below this many paired tasks (amounts)."""
    estimand: str = "population"
    n_invalid_excluded: int = 0
    n_missing_excluded: int = 0
    """Valid episodes without a value for the metric (e.g. unknown cost)."""
    verdict_ci_low: float = NAN
    """The verdict's interval, on its basis (the difference, or the ratio): it excludes "no difference"
    exactly when the verdict is called."""
    verdict_ci_high: float = NAN
    verdict_method: str = ""
    verdict_confidence: float = 0.95
    """Level of the verdict's interval: ``confidence``, or the Holm step's level (adjusted p-values)."""
    confidence: float = 0.95
    """The level asked for: a verdict is called when p (adjusted, if it is) < 1 − confidence."""
    p_adjusted: float = NAN
    """Holm-adjusted p-value, when the comparison is one of a family (``compare_metrics``)."""
    mde_note: str = ""
    """Why ``mde`` (or ``mde_ratio``) is undefined, when it is."""
    invalid_a: dict[str, int] = field(default_factory=dict)
    """a's invalid episodes on the compared tasks, by recorded cause (``missingness.invalid_counts``)."""
    invalid_b: dict[str, int] = field(default_factory=dict)
    p_worst: float = NAN
    """With invalid episodes: the p-value of the bounds (``missingness.bound_p``: the largest p of the
    observed, worst and best cases when they agree in direction, else 1); NaN without any."""
    missingness: str = ""
    """How the invalid episodes bear on the verdict, in words; ``''`` when neither arm has any."""

    @property
    def p_verdict(self) -> float:
        """The p-value the verdict rests on: the test's, or with invalid episodes the bounds' when larger."""
        return self.p_value if math.isnan(self.p_worst) else max(self.p_value, self.p_worst)


def paired_means(episodes: pd.DataFrame, a: str, b: str, metric: str) -> pd.DataFrame:
    """Task × (mean, n, var) × variant, over valid episodes with a value; NaN where a variant lacks
    the task (its ``n`` too). The same numbers as ``task_means`` pivoted, counted with numpy: every
    comparison starts here, so it is kept cheap."""
    chosen = episodes[episodes["variant_id"].isin([a, b]) & ~is_invalid(episodes)]
    values = metric_values(chosen, metric).to_numpy(float)
    kept = ~np.isnan(values)
    tasks, index = np.unique(chosen["task_id"].to_numpy(object)[kept].astype(str), return_inverse=True)
    of_b = (chosen["variant_id"].to_numpy(object)[kept] == b).astype(int)
    values = values[kept]
    columns: dict[tuple[str, str], np.ndarray] = {}
    slot = index * 2 + of_b
    size = 2 * len(tasks)
    n = np.bincount(slot, minlength=size).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.bincount(slot, weights=values, minlength=size) / n
        spread = np.bincount(slot, weights=(values - mean[slot]) ** 2, minlength=size)
        var = np.where(n > 1, spread / (n - 1), NAN)
    for name, column in (("mean", mean), ("n", np.where(n > 0, n, NAN)), ("var", var)):
        for arm, offset in ((a, 0), (b, 1)):
            columns[(name, arm)] = column[offset::2]
    wide = pd.DataFrame(columns, index=pd.Index(tasks, name="task_id"))
    wide.columns = pd.MultiIndex.from_tuples(list(columns))
    return wide


def verdict_of(c: Comparison, p_value: float | None = None) -> Verdict:
    """The verdict on the basis the test used: called when p (``c.p_verdict``, or ``p_value`` when
    larger, e.g. Holm-adjusted) < 0.05 and the verdict's interval excludes "no difference" (the two
    agree by construction); never below ``c.min_tasks`` paired tasks."""
    p = c.p_verdict if p_value is None else max(p_value, c.p_verdict)
    if c.n_tasks < c.min_tasks:
        return "inconclusive"
    if c.basis == "ratio":
        point, low, high = (log_of(x) for x in (c.ratio, c.verdict_ci_low, c.verdict_ci_high))
        return verdict(point, low, high, p, c.higher_is_better, 1 - c.confidence)
    return verdict(c.diff, c.verdict_ci_low, c.verdict_ci_high, p, c.higher_is_better, 1 - c.confidence)


def log_of(x: float) -> float:
    """log x, −inf at 0 (an unbounded ratio interval), NaN below."""
    return math.log(x) if x > 0 else (-math.inf if x == 0 else NAN)


def mean(x: np.ndarray) -> float:
    """Mean, NaN when empty (without a warning)."""
    return float(np.mean(x)) if len(x) else NAN


def correlation(xa: np.ndarray, xb: np.ndarray) -> float:
    """Pearson correlation of the two arms' task means; NaN when either arm is constant."""
    if len(xa) < 2 or np.ptp(xa) == 0 or np.ptp(xb) == 0:
        return NAN
    return float(np.corrcoef(xa, xb)[0, 1])


def verdict(
    diff: float, low: float, high: float, p_value: float, higher_better: bool = True, alpha: float = ALPHA
) -> Verdict:
    """``a_better`` / ``b_better`` when the interval excludes 0 and p < ``alpha``, else ``inconclusive``.

    Example: ``verdict(0.2, 0.05, 0.35, 0.01)`` -> ``'a_better'``
    """
    if not (p_value < alpha and (low > 0 or high < 0)):
        return "inconclusive"
    return "a_better" if (low > 0) == higher_better else "b_better"


def comparisons_frame(comparisons: list[Comparison]) -> pd.DataFrame:
    """Comparison records as a frame, one row each (the input of ``plots.forest_plot``).

    Example: ``comparisons_frame([compare(df, "a", "b", m) for m in ("passed", "cost_usd")])``
    """
    columns = list(Comparison.__dataclass_fields__)
    return pd.DataFrame([asdict(c) for c in comparisons], columns=columns)
