"""``compare`` two variants paired on tasks.

A verdict is called when the test's p < 0.05, which is exactly when the verdict's interval
(``verdict_ci_low``, ``verdict_ci_high``: the test inverted, see ``paired``) excludes "no
difference": 0 for a difference, 1 for a ratio (amounts rest on the ratio of per-task means; see
``amounts``). For metrics where lower is better (tokens, cost, duration, turns, tool calls;
``higher_is_better``) ``a_better`` means a is *lower*. ``mde`` is the smallest difference the same
test would call with 80 % power at this number of tasks (``power_model``).

Example::

    c = compare(runs.episodes, "candidate", "baseline")
    c.diff, (c.ci_low, c.ci_high), c.p_value, c.verdict
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import NamedTuple

import numpy as np
import pandas as pd

from coder_eval.analysis.frames.load import Runs
from coder_eval.analysis.stats.amounts import MIN_TASKS
from coder_eval.analysis.stats.comparison import (
    Comparison,
    Method,
    Verdict,
    comparisons_frame,
    correlation,
    log_of,
    mean,
    paired_means,
    verdict,
    verdict_of,
)
from coder_eval.analysis.stats.estimate import Estimand, check_estimand
from coder_eval.analysis.stats.headline_tasks import headline_of
from coder_eval.analysis.stats.intervals import N_RESAMPLES, NAN, SEED, no_spread
from coder_eval.analysis.stats.metrics import (
    MetricKind,
    check_variants,
    higher_is_better,
    is_invalid,
    metric_kind,
    metric_values,
    renumbered,
)
from coder_eval.analysis.stats.missingness import bound_p, bounds_note, extremes, invalid_counts
from coder_eval.analysis.stats.paired import Arm, PairedResult, paired_test
from coder_eval.analysis.stats.power_model import DifferenceModel
from coder_eval.errors import AnalysisError


def compare(
    episodes: pd.DataFrame | Runs,
    a: str,
    b: str,
    metric: str = "passed",
    confidence: float = 0.95,
    n_resamples: int = N_RESAMPLES,
    seed: int = SEED,
    estimand: Estimand = "population",
    method: Method = "paired",
    planned: bool = True,
) -> Comparison:
    """Paired comparison of variants ``a`` and ``b`` on the tasks both have valid episodes for.

    Given loaded runs (``load_runs``), the tasks are the declared headline (``selection.headline_of``:
    the graded tasks, by the run's ``compare:`` block), as every report has them; given an episodes
    frame, every task in it.

    Tasks present in only one variant are excluded and counted (``n_excluded_tasks``).
    ``estimand="fixed_tasks"`` narrows the intervals to these tasks (needs repeats);
    ``method="mixed"`` fits a mixed-effects logistic model instead (pass rates; ``mixed``).
    ``planned=False`` skips the MDE (NaN), e.g. to recompute an interval at another level.

    Example::

        compare(runs, "candidate", "baseline", metric="cost_usd").ratio
    """
    if a == b:
        raise AnalysisError(f"compare needs two different variants (got {a!r} twice)")
    if isinstance(episodes, Runs):
        episodes = headline_of(episodes).episodes
    check_estimand(estimand)
    episodes = renumbered(episodes)
    check_variants(episodes, a, b)
    kind = metric_kind(metric, episodes if metric in episodes.columns else None)
    if method == "mixed":
        from coder_eval.analysis.stats.mixed import mixed_comparison

        return mixed_comparison(episodes, a, b, metric, confidence)
    if method != "paired":
        raise AnalysisError(f"method must be 'paired' or 'mixed' (got {method!r})")
    wide = paired_means(episodes, a, b, metric)
    both = wide.dropna(subset=[("mean", a), ("mean", b)])
    arm_a, arm_b = (arm(both, v) for v in (a, b))
    test = Test(kind, confidence, n_resamples, seed, estimand)
    result = test.run(arm_a, arm_b)
    repeats = int(np.nanmax(both[["n"]].to_numpy(float))) if len(both) else 0  # K of the paired tasks only
    counts = (len(both), repeats, len(wide) - len(both), *excluded_counts(episodes, a, b, metric))
    c = record(metric, a, b, counts, (arm_a, arm_b), kind, result, seed, planned)
    c = replace(c, estimand=estimand, verdict_confidence=confidence, confidence=confidence)
    c = replace(c, invalid_a=invalid_counts(episodes, a), invalid_b=invalid_counts(episodes, b))
    if (sum(c.invalid_a.values()) or sum(c.invalid_b.values())) and len(both):
        c = bounded(c, episodes, test, result)
    return replace(c, verdict=verdict_of(c))


class Test(NamedTuple):
    """The paired test ``compare`` runs, with its settings (run again on the bounds of invalid episodes)."""

    kind: MetricKind
    confidence: float
    n_resamples: int
    seed: int
    estimand: Estimand

    def run(self, arm_a: Arm, arm_b: Arm) -> PairedResult:
        return paired_test(
            arm_a, arm_b, self.kind, self.confidence, self.n_resamples, self.seed, self.estimand
        )

    def on(self, episodes: pd.DataFrame, a: str, b: str, metric: str) -> PairedResult:
        """The test on the tasks of ``episodes`` that both arms have valid episodes of."""
        both = paired_means(episodes, a, b, metric).dropna(subset=[("mean", a), ("mean", b)])
        return self.run(arm(both, a), arm(both, b))


def bounded(c: Comparison, episodes: pd.DataFrame, test: Test, observed: PairedResult) -> Comparison:
    """The comparison with its invalid episodes bounded (``missingness``): the verdict's p is the
    bounds' p when larger, and its interval the hull of the observed, worst and best cases'."""
    cases = extremes(episodes, c.a, c.b, c.metric, test.kind)
    results = [observed, *(test.on(frame, c.a, c.b, c.metric) for frame in cases)]
    intervals = [verdict_interval(r) for r in results]
    if len({r.basis for r in results}) > 1:
        why = "their worst case has no ratio, so it cannot bound the ratio"
        return replace(c, p_worst=1.0, missingness=bounds_note(c, test.kind, results, 1.0, why))
    effects = [log_of(r.ratio) if r.basis == "ratio" else r.diff for r in results]
    p_bounds = bound_p(effects, [r.p_value for r in results])
    low = min(i.low for i in intervals)
    high = max(i.high for i in intervals)
    method = f"{c.verdict_method}, widened to the worst and best cases of the invalid episodes"
    return replace(
        c, verdict_ci_low=low, verdict_ci_high=high, verdict_method=method, p_worst=p_bounds,
        missingness=bounds_note(c, test.kind, results, p_bounds),
    )  # fmt: skip


def record(
    metric: str,
    a: str,
    b: str,
    counts: tuple[int, int, int, int, int],
    arms: tuple[Arm, Arm],
    kind: str,
    result: PairedResult,
    seed: int,
    planned: bool = True,
) -> Comparison:
    """The Comparison of a paired test (verdict still to set); counts are (n_tasks, n_repeats,
    n_excluded_tasks, n_invalid_excluded, n_missing_excluded)."""
    n_tasks, repeats, excluded, invalid, missing = counts
    xa, xb = arms[0].means, arms[1].means
    d = xa - xb
    binary = kind == "binary"
    mde, mde_ratio, note = (
        planned_mde(arms[0], arms[1], kind, result, seed) if planned else (NAN, NAN, "not computed")
    )
    on_basis = verdict_interval(result)
    return Comparison(
        metric, a, b, n_tasks, repeats, excluded, mean_a=mean(xa), mean_b=mean(xb), diff=result.diff,
        ci_low=result.low, ci_high=result.high, p_value=result.p_value, test=result.test,
        a_only=float((d > 0).sum()) if binary else NAN, b_only=float((d < 0).sum()) if binary else NAN,
        correlation=correlation(xa, xb), mde=mde, verdict="inconclusive", method=result.method,
        higher_is_better=higher_is_better(metric), ratio=result.ratio, ratio_ci_low=result.ratio_low,
        ratio_ci_high=result.ratio_high, p_value_t=result.p_value_t, ratio_method=result.ratio_method,
        basis=result.basis, mde_ratio=mde_ratio, min_tasks=MIN_TASKS if kind == "amount" else 0,
        n_invalid_excluded=invalid, n_missing_excluded=missing, verdict_ci_low=on_basis.low,
        verdict_ci_high=on_basis.high, verdict_method=on_basis.method, mde_note=note,
    )  # fmt: skip


class BasisInterval(NamedTuple):
    """The verdict's interval, on the scale the verdict rests on, and its method."""

    low: float
    high: float
    method: str


def verdict_interval(result: PairedResult) -> BasisInterval:
    """The verdict's interval of a paired result: the ratio's when the verdict rests on it."""
    if result.basis == "ratio":
        return BasisInterval(result.ratio_low, result.ratio_high, result.ratio_method)
    return BasisInterval(result.low, result.high, result.method)


def arm(both: pd.DataFrame, variant: str) -> Arm:
    """One variant's task means, run counts and run-to-run variances on the paired tasks."""
    return Arm.of(
        both[("mean", variant)].to_numpy(float),
        both[("n", variant)].to_numpy(float),
        both[("var", variant)].to_numpy(float),
    )


def excluded_counts(episodes: pd.DataFrame, a: str, b: str, metric: str) -> tuple[int, int]:
    """(invalid episodes, valid episodes without a value) of the two variants."""
    pair = episodes["variant_id"].isin([a, b]).to_numpy()
    invalid = is_invalid(episodes).to_numpy() & pair
    missing = metric_values(episodes, metric).isna().to_numpy() & pair & ~invalid
    return int(invalid.sum()), int(missing.sum())


def planned_mde(
    arm_a: Arm, arm_b: Arm, kind: str, result: PairedResult, seed: int
) -> tuple[float, float, str]:
    """(mde, mde_ratio, why undefined) of the test that was run, at this number of tasks (``power_model``)."""
    n = len(arm_a.means)
    if n < 2:
        return NAN, NAN, "planning needs at least 2 paired tasks"
    if result.basis == "ratio":
        logs = np.log(arm_a.means) - np.log(arm_b.means)
        delta = DifferenceModel.from_pilot(logs, None, MIN_TASKS, seed).mde(n)
        return (
            NAN,
            math.exp(delta),
            "" if not math.isnan(delta) else f"no effect reaches 80 % power at {n} tasks",
        )
    d = arm_a.means - arm_b.means
    model = DifferenceModel.from_pilot(
        d, None if kind == "amount" else 1.0, MIN_TASKS if kind == "amount" else 0, seed
    )
    if model.denominator is None and no_spread(d):
        return NAN, NAN, "undefined: no spread in the paired differences"
    delta = model.mde(n)
    return delta, NAN, "" if not math.isnan(delta) else f"no effect reaches 80 % power at {n} tasks"


__all__ = [
    "Comparison",
    "Method",
    "Verdict",
    "compare",
    "comparisons_frame",
    "correlation",
    "log_of",
    "mean",
    "paired_means",
    "record",
    "verdict",
    "verdict_of",
]
