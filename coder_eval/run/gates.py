"""Gates: thresholds checked after a run, with the analysis library's numbers (the reports' numbers).

- ``--min-pass-rate X``: each variant's pass rate (``summarize``: mean of task means, invalid
  episodes excluded) on the headline tasks of the declared comparison (``verdicts``: the graded
  tasks, by the experiment's ``compare:`` block; every task when the run has only classification
  items) must be at least X. It is the pass rate the reports show.
- ``suite_thresholds`` on a (dataset) task, or on one of its criteria: per variant, over that task's
  rows, for a criterion id or kind: ``pass_rate`` (share of episodes where the criterion passed,
  task-clustered), ``mean`` (its mean score), ``completion_rate`` (share of episodes where it was
  graded at all), ``accuracy``, ``macro_f1``, ``weighted_f1`` and ``micro_f1``
  (``classification``), and ``recall`` / ``precision`` / ``f1``, checked for **every positive
  label** (each label other than ``none`` that some row expects), or for one label as
  ``recall.<label>``.

A gate compares the **point estimate** with the threshold; the interval is shown beside it. An
undefined value (no valid episode, a label never observed for precision) fails. A variant with
``gated: false`` (a reference arm) is measured the same way but its rows read ``not gated`` and
never fail the run.

Example::

    results = evaluate_gates(load_runs(run_dir), ["baseline", "candidate"], suites, min_pass_rate=0.8)
    any(r.verdict == "fail" for r in results)
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from dataclasses import asdict, dataclass, replace
from typing import TYPE_CHECKING, Any, Literal

from coder_eval.criteria.classification_match import NONE_LABEL
from coder_eval.errors import AnalysisError
from coder_eval.experiment.resolve import Suite

if TYPE_CHECKING:
    import pandas as pd

    from coder_eval.analysis import Classification, Runs

NAN = float("nan")
F1_AVERAGES = {
    "macro_f1": "mean of per-label F1",
    "weighted_f1": "per-label F1 weighted by support",
    "micro_f1": "F1 of pooled counts (= accuracy)",
}


@dataclass(frozen=True)
class GateResult:
    """One row of the gate table."""

    gate: str
    variant_id: str
    metric: str
    threshold: float
    value: float = NAN
    ci_low: float = NAN
    ci_high: float = NAN
    label: str | None = None
    verdict: Literal["pass", "fail", "not gated"] = "fail"
    note: str = ""

    def as_json(self) -> dict[str, Any]:
        return {k: None if isinstance(v, float) and math.isnan(v) else v for k, v in asdict(self).items()}


def evaluate_gates(
    runs: Runs,
    variants: Sequence[str],
    suites: Sequence[Suite],
    min_pass_rate: float | None = None,
    ungated: Collection[str] = (),
) -> list[GateResult]:
    """Every gate, per variant, in table order; rows of ``ungated`` variants are marked, not judged."""
    results = [] if min_pass_rate is None else pass_rate_gates(gated_episodes(runs), variants, min_pass_rate)
    for suite in suites:
        results += suite_gates(runs.criteria, variants, suite, runs.episodes)
    return [replace(r, verdict="not gated") if r.variant_id in ungated else r for r in results]


def failed(results: Sequence[GateResult]) -> list[GateResult]:
    return [r for r in results if r.verdict == "fail"]


def gated_episodes(runs: Runs) -> tuple[pd.DataFrame, str]:
    """The episodes ``--min-pass-rate`` reads: the headline tasks, or every task when there are none."""
    from coder_eval.analysis.stats.headline_tasks import headline_of

    chosen = headline_of(runs)
    if chosen.tasks or runs.episodes.empty:
        return chosen.episodes, f"headline: {chosen.description}"
    return runs.episodes, "no graded task (only classification items): every task"


def pass_rate_gates(
    episodes: pd.DataFrame | tuple[pd.DataFrame, str], variants: Sequence[str], threshold: float
) -> list[GateResult]:
    """``--min-pass-rate``: one row per variant (``episodes`` may carry a note on which tasks they are)."""
    from coder_eval.analysis import summarize
    from coder_eval.analysis.stats.missingness import invalid_counts

    episodes, tasks = episodes if isinstance(episodes, tuple) else (episodes, "")
    table = summarize(episodes) if len(episodes) else None
    results = []
    for variant in variants:
        base = GateResult("min-pass-rate", variant, "pass_rate", threshold)
        row = None if table is None else table[table["variant_id"] == variant]
        if row is None or row.empty:
            results.append(replace(base, note="no episodes"))
            continue
        judged = _judged(base, *_estimate(row.iloc[0], invalid_counts(episodes, variant)))
        results.append(replace(judged, note=f"{judged.note}; {tasks}") if tasks else judged)
    return results


def suite_gates(
    criteria: pd.DataFrame, variants: Sequence[str], suite: Suite, episodes: pd.DataFrame | None = None
) -> list[GateResult]:
    """A suite's ``suite_thresholds``: per criterion, variant and metric (per label for R, P, F1).
    ``completion_rate`` needs ``episodes`` (the episodes in which nothing was graded)."""
    rows = criteria[criteria["task_id"].isin(suite.task_ids)]
    results = []
    for key, thresholds in suite.thresholds.items():
        ids = _criterion_ids(rows, key)
        for variant in variants:
            for metric, threshold in thresholds.items():
                base = GateResult(f"{suite.name}:{key}", variant, metric, threshold)
                if len(ids) != 1:
                    many = f"kind {key!r} matches several criteria ({', '.join(ids)}); key by id"
                    results.append(replace(base, note=many if ids else "no results for this criterion"))
                    continue
                if metric == "completion_rate":
                    results.append(_completion_gate(episodes, criteria, suite, ids[0], base))
                    continue
                mine = rows[(rows["variant_id"] == variant) & (rows["criterion_id"] == ids[0])]
                results += _metric_gates(mine, ids[0], base)
    return results


def _completion_gate(
    episodes: pd.DataFrame | None, criteria: pd.DataFrame, suite: Suite, criterion_id: str, base: GateResult
) -> GateResult:
    from coder_eval.analysis.answer.completion import completion_rate

    if episodes is None:
        return replace(base, note="completion_rate needs the episodes")
    mine = episodes[episodes["task_id"].isin(suite.task_ids) & (episodes["variant_id"] == base.variant_id)]
    if mine.empty:
        return replace(base, note="no episodes")
    row = completion_rate(mine, criteria, criterion_id).iloc[0]
    note = f"{row['method']}; {int(row['n_tasks'])} tasks; invalid episodes count as not completed"
    return _judged(base, float(row["mean"]), float(row["ci_low"]), float(row["ci_high"]), note)


def _criterion_ids(rows: pd.DataFrame, key: str) -> list[str]:
    by_id = rows[rows["criterion_id"] == key]
    matched = by_id if len(by_id) else rows[rows["kind"] == key]
    return sorted(map(str, matched["criterion_id"].unique()))


def _metric_gates(rows: pd.DataFrame, criterion_id: str, base: GateResult) -> list[GateResult]:
    from coder_eval.analysis import classification, summarize

    if rows.empty:
        return [replace(base, note="no episodes")]
    if base.metric in ("pass_rate", "mean"):
        table = summarize(rows, metric="passed" if base.metric == "pass_rate" else "score")
        return [_judged(base, *_estimate(table.iloc[0]))]
    try:
        cls = classification(rows, criterion=criterion_id)
    except AnalysisError as exc:
        return [replace(base, note=str(exc))]
    if base.metric == "accuracy":
        note = f"{cls.accuracy_method}; n={cls.n}"
        return [_judged(base, cls.accuracy, cls.accuracy_low, cls.accuracy_high, note)]
    if base.metric in F1_AVERAGES:
        value = float(getattr(cls, base.metric))
        return [_judged(base, value, NAN, NAN, f"{F1_AVERAGES[base.metric]}; n={cls.n}")]
    return _label_gates(cls, base)


def _label_gates(cls: Classification, base: GateResult) -> list[GateResult]:
    """``recall`` for every positive label, or ``recall.<label>`` for that one."""
    metric, _, label = base.metric.partition(".")
    base = replace(base, metric=metric)
    if label:
        row = cls.per_label[cls.per_label["label"] == label]
        if row.empty or (metric == "recall" and int(row.iloc[0]["support"]) == 0):
            return [replace(base, label=label, note=f"undefined: no row expects the label {label!r}")]
        return [_label_gate(base, row.iloc[0])]
    positive = cls.per_label[(cls.per_label["label"] != NONE_LABEL) & (cls.per_label["support"] > 0)]
    if positive.empty:
        return [replace(base, note="no row expects a positive label")]
    return [_label_gate(base, row) for _, row in positive.iterrows()]


def _label_gate(base: GateResult, row: pd.Series) -> GateResult:
    metric = base.metric
    p_and_r, _, f1 = str(row["method"]).partition("; ")
    method = (f1 if metric == "f1" else p_and_r).removesuffix(" for F1").removesuffix(" for P and R")
    note = f"{method}; support {int(row['support'])}"
    if math.isnan(float(row[metric])):
        note = f"undefined: label never observed; {note}"
    judged = _judged(
        base, float(row[metric]), float(row[f"{metric}_low"]), float(row[f"{metric}_high"]), note
    )
    return replace(judged, label=str(row["label"]))


def _estimate(row: pd.Series, causes: dict[str, int] | None = None) -> tuple[float, float, float, str]:
    from coder_eval.analysis.stats.missingness import causes_text

    invalid = f"{int(row['n_invalid_excluded'])} invalid excluded"
    if causes and sum(causes.values()):
        invalid += f" ({causes_text(causes)})"
    note = f"{row['method']}; {int(row['n_tasks'])} tasks; {invalid}"
    return float(row["mean"]), float(row["ci_low"]), float(row["ci_high"]), note


def _judged(base: GateResult, value: float, low: float, high: float, note: str) -> GateResult:
    ok = not math.isnan(value) and value >= base.threshold
    return replace(base, value=value, ci_low=low, ci_high=high, verdict="pass" if ok else "fail", note=note)
