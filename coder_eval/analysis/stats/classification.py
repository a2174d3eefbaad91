"""``classification``: confusion matrix and per-label precision, recall and F1 of a labelling criterion.

Items are criterion rows with an expected or observed label (e.g. "which skill triggered"); a
missing label shows as ``"none"``. P and R get Wilson intervals with one run per task, a cluster
bootstrap over tasks otherwise; F1 always gets the cluster bootstrap.

Example::

    cls = classification(runs.criteria, criterion="skill")
    cls.confusion, cls.per_label, cls.misclassified
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from coder_eval.analysis.stats.estimate import wilson_effective
from coder_eval.analysis.stats.intervals import (
    N_RESAMPLES,
    NAN,
    SEED,
    FloatArray,
    Interval,
    bootstrap_interval,
    wilson_interval,
)
from coder_eval.analysis.stats.metrics import check_columns
from coder_eval.errors import AnalysisError, unknown_name

NONE_LABEL = "none"
LABEL_COLUMNS = [
    "label",
    "support",
    "precision",
    "precision_low",
    "precision_high",
    "recall",
    "recall_low",
    "recall_high",
    "f1",
    "f1_low",
    "f1_high",
    "method",
]


@dataclass(frozen=True)
class Classification:
    """Confusion matrix (expected rows × observed columns) and per-label scores.

    Example: ``classification(criteria).per_label[["label", "precision", "recall", "f1"]]``
    """

    criterion_id: str
    confusion: pd.DataFrame
    per_label: pd.DataFrame
    accuracy: float
    accuracy_low: float
    accuracy_high: float
    macro_f1: float
    n: int
    rows: pd.DataFrame
    """The items, with ``expected``, ``observed`` and ``correct`` columns."""
    accuracy_method: str = "Wilson"
    """Wilson with one item per task; a cluster bootstrap over tasks when tasks have several."""
    weighted_f1: float = NAN
    """Per-label F1 weighted by support (items expected with the label), ``none`` included."""
    micro_f1: float = NAN
    """F1 of the counts pooled over every label; with one label per item it equals the accuracy."""

    @property
    def misclassified(self) -> pd.DataFrame:
        """Items whose observed label differs from the expected one."""
        return self.rows[~self.rows["correct"]]


def classification(
    criteria: pd.DataFrame,
    criterion: str | None = None,
    confidence: float = 0.95,
    n_resamples: int = N_RESAMPLES,
    seed: int = SEED,
) -> Classification:
    """Score one labelling criterion over valid episodes.

    Example: ``classification(runs.criteria, criterion="skill").accuracy``
    """
    items = labelled_items(criteria, criterion)
    labels = sorted(set(items["expected"]) | set(items["observed"]))
    confusion = pd.crosstab(items["expected"], items["observed"]).reindex(
        index=labels, columns=labels, fill_value=0
    )
    confusion.index.name, confusion.columns.name = "expected", "observed"
    # one item per task: pooled variants (or repeats) put several items on a task, which are not independent
    one_run = not items.duplicated(["task_id"]).any()
    per_label = pd.DataFrame(
        [label_scores(items, label, one_run, confidence, n_resamples, seed) for label in labels],
        columns=LABEL_COLUMNS,
    )
    accuracy, low, high, method = accuracy_estimate(items, one_run, confidence, n_resamples, seed)
    weighted, micro = f1_averages(per_label, items)
    return Classification(
        str(items["criterion_id"].iloc[0]),
        confusion,
        per_label,
        accuracy,
        low,
        high,
        float(per_label["f1"].mean()),
        len(items),
        items,
        method,
        weighted,
        micro,
    )


def f1_averages(per_label: pd.DataFrame, items: pd.DataFrame) -> tuple[float, float]:
    """Weighted F1 (per-label F1 weighted by support) and micro F1 (F1 of the pooled counts).

    With one label per item every wrong item is one false positive and one false negative, so micro
    F1 equals the accuracy.
    """
    support = per_label["support"].to_numpy(float)
    f1 = per_label["f1"].to_numpy(float)
    weighted = float((f1 * support).sum() / support.sum()) if support.sum() else NAN
    correct, wrong = float(items["correct"].sum()), float((~items["correct"]).sum())
    micro = float(f1_of(np.array([correct]), np.array([wrong]), np.array([wrong])))
    return weighted, micro


def accuracy_estimate(
    items: pd.DataFrame, one_run: bool, confidence: float, n_resamples: int, seed: int
) -> tuple[float, float, float, str]:
    """Share of correct items: Wilson with one item per task, else a cluster bootstrap over tasks
    (repeats and variants of a task are not independent items)."""
    n, correct = len(items), int(items["correct"].sum())
    if one_run:
        return (correct / n, *wilson_interval(correct, n, confidence), "Wilson")
    per_task = items.groupby("task_id")["correct"].agg(["sum", "count"]).astype(float)
    hits, sizes = per_task["sum"].to_numpy(float), per_task["count"].to_numpy(float)
    ci, method = clustered_share(hits, sizes, confidence, n_resamples, seed)
    return correct / n, ci.low, ci.high, method


def clustered_share(
    hits: FloatArray, sizes: FloatArray, confidence: float, n_resamples: int, seed: int
) -> tuple[Interval, str]:
    """Σ hits / Σ sizes over tasks: cluster bootstrap over the tasks with a denominator (a task that
    never expects a label says nothing about its recall; counting its resamples as 0 would drag a
    recall of 4 out of 4 down to [0, 1]), or pooled Wilson when every resample agrees (all correct,
    say), since an interval from finite data never has zero width."""
    counted = sizes > 0
    hits, sizes = hits[counted], sizes[counted]
    ci, method = bootstrap_interval((hits, sizes), ratio_of_sums, confidence, n_resamples, seed)
    if ci.low < ci.high:
        return ci, method
    p = float(hits.sum() / sizes.sum())
    return wilson_effective(p, float(sizes.sum()), confidence), "pooled Wilson (no spread between tasks)"


def labelled_items(criteria: pd.DataFrame, criterion: str | None) -> pd.DataFrame:
    """Rows of the chosen criterion with labels, from valid episodes, with expected/observed/correct."""
    check_columns(criteria, ["criterion_id", "expected_label", "observed_label", "task_id"], "criteria")
    labelled = criteria[criteria["expected_label"].notna() | criteria["observed_label"].notna()]
    if "outcome" in labelled.columns:
        labelled = labelled[labelled["outcome"] != "invalid"]
    ids = sorted(map(str, labelled["criterion_id"].unique()))
    if not ids:
        raise AnalysisError("no criterion carries expected_label or observed_label")
    if criterion is None and len(ids) > 1:
        raise AnalysisError(f"several criteria have labels; pass criterion= one of: {', '.join(ids)}")
    chosen = criterion or ids[0]
    if chosen not in ids:
        raise AnalysisError(unknown_name("labelled criterion", chosen, ids))
    items = labelled[labelled["criterion_id"] == chosen].copy()
    items["expected"] = items["expected_label"].fillna(NONE_LABEL).astype(str)
    items["observed"] = items["observed_label"].fillna(NONE_LABEL).astype(str)
    items["correct"] = items["expected"] == items["observed"]
    return items


def f1_of(tp: FloatArray, fp: FloatArray, fn: FloatArray, axis: int = -1) -> FloatArray:
    """F1 = 2·TP / (2·TP + FP + FN) of summed counts (0 in a resample where the label never appears)."""
    tp_s, fp_s, fn_s = (np.sum(x, axis=axis) for x in (tp, fp, fn))
    return share(2 * tp_s, 2 * tp_s + fp_s + fn_s)


def ratio_of_sums(num: FloatArray, den: FloatArray, axis: int = -1) -> FloatArray:
    """Σ num / Σ den along ``axis`` (0 where Σ den is 0; ``clustered_share`` resamples tasks with one)."""
    return share(np.sum(num, axis=axis), np.sum(den, axis=axis))


def share(num: FloatArray, den: FloatArray) -> FloatArray:
    """num / den, 0 where den is 0."""
    out = np.zeros_like(np.asarray(num, dtype=float))
    return np.asarray(np.divide(num, den, out=out, where=np.asarray(den) != 0), dtype=float)


def share_estimate(
    tp: FloatArray, den: FloatArray, one_run: bool, confidence: float, n_resamples: int, seed: int
) -> tuple[float, float, float, str]:
    """Σ tp / Σ den (precision or recall) with Wilson (one run per task) or a clustered interval."""
    k, n = int(tp.sum()), int(den.sum())
    if n == 0:
        return NAN, NAN, NAN, "undefined"
    if one_run:
        return (k / n, *wilson_interval(k, n, confidence), "Wilson")
    ci, method = clustered_share(tp, den, confidence, n_resamples, seed)
    return k / n, ci.low, ci.high, method


def label_scores(
    items: pd.DataFrame, label: str, one_run: bool, confidence: float, n_resamples: int, seed: int
) -> tuple[object, ...]:
    """One per-label row: support, precision, recall, F1, each with its interval."""
    counts = (
        pd.DataFrame(
            {
                "tp": (items["expected"] == label) & (items["observed"] == label),
                "fp": (items["expected"] != label) & (items["observed"] == label),
                "fn": (items["expected"] == label) & (items["observed"] != label),
            }
        )
        .astype(float)
        .groupby(items["task_id"])
        .sum()
    )
    tp, fp, fn = (counts[c].to_numpy(float) for c in ("tp", "fp", "fn"))
    ratios = [share_estimate(tp, den, one_run, confidence, n_resamples, seed) for den in (tp + fp, tp + fn)]
    pooled = any(method.startswith("pooled") for *_, method in ratios)
    p_and_r = (
        "Wilson" if one_run else "cluster bootstrap" + (" (pooled Wilson where it has no spread)" * pooled)
    )
    present = (tp + fp + fn) > 0  # tasks where the label is expected or observed at all
    f1_ci, f1_method = bootstrap_interval(
        (tp[present], fp[present], fn[present]), f1_of, confidence, n_resamples, seed
    )
    if not f1_ci.low < f1_ci.high:  # every resample gives the same F1: F1 = TP / (TP + (FP + FN) / 2)
        size = float(tp.sum() + (fp.sum() + fn.sum()) / 2)
        f1_ci, f1_method = wilson_effective(float(tp.sum()) / size, size, confidence), "pooled Wilson"
    method = f"{p_and_r} for P and R; {f1_method} for F1"
    return (
        label,
        int(tp.sum() + fn.sum()),
        *ratios[0][:3],
        *ratios[1][:3],
        float(f1_of(tp, fp, fn)),
        f1_ci.low,
        f1_ci.high,
        method,
    )
