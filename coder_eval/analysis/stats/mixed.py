"""A second opinion on pass rates: a mixed-effects logistic model with a random intercept per task.

logit P(pass) = β₀ + β₁ · [variant = a] + u_task, u_task ~ N(0, σ²), fitted to every valid episode
of the paired tasks by statsmodels' ``BinomialBayesMixedGLM`` with variational Bayes (``fit_vb``;
its MAP fit lets σ collapse to 0). exp(β₁) is the odds ratio of a to b *within a task*; its
interval and p-value are Wald-type from the approximate posterior (mean ± z · sd). ``diff`` is the
model's average over tasks of P(pass | a) − P(pass | b), its interval the same at β₁'s endpoints.

Example::

    compare(runs.episodes, "candidate", "baseline", method="mixed").ratio    # odds ratio
"""

from __future__ import annotations

import math
import warnings
from dataclasses import replace
from typing import NamedTuple

import numpy as np
import pandas as pd
from scipy import stats
from scipy.special import expit
from statsmodels.genmod.bayes_mixed_glm import BinomialBayesMixedGLM

from coder_eval.analysis.stats.comparison import Comparison, correlation, mean, paired_means, verdict_of
from coder_eval.analysis.stats.intervals import NAN
from coder_eval.analysis.stats.metrics import higher_is_better, is_invalid, metric_kind, metric_values
from coder_eval.errors import AnalysisError

FORMULA = "y ~ treat"
RANDOM = {"task": "0 + C(task)"}
TEST = "mixed-effects logistic, task intercepts (BinomialBayesMixedGLM, variational Bayes)"


class MixedFit(NamedTuple):
    """The treatment coefficient (log odds ratio a / b) and what the model implies on the rate scale."""

    log_odds_ratio: float
    sd: float
    p_value: float
    diff: float
    diff_low: float
    diff_high: float
    task_sd: float
    """Estimated standard deviation of the task intercepts (logit scale)."""


def episode_rows(episodes: pd.DataFrame, a: str, b: str, metric: str, tasks: pd.Index) -> pd.DataFrame:
    """One row per valid episode of a or b on ``tasks``: y (0/1), treat (1 for a), task."""
    chosen = episodes[episodes["variant_id"].isin([a, b]) & ~is_invalid(episodes)]
    y = metric_values(chosen, metric)
    rows = pd.DataFrame(
        {
            "y": y.to_numpy(float),
            "treat": (chosen["variant_id"] == a).to_numpy(float),
            "task": chosen["task_id"],
        }
    )
    return rows[rows["task"].isin(tasks) & rows["y"].notna()].reset_index(drop=True)


def fit_mixed(rows: pd.DataFrame, confidence: float = 0.95) -> MixedFit:
    """Fit the model to ``episode_rows`` and read off β₁ and the implied difference of pass rates.

    Example: ``fit_mixed(episode_rows(df, "a", "b", "passed", tasks)).log_odds_ratio``
    """
    model = BinomialBayesMixedGLM.from_formula(FORMULA, RANDOM, rows)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # optimiser chatter; the fit is checked below
        result = model.fit_vb()
    beta, sd = float(result.fe_mean[1]), float(result.fe_sd[1])
    z = float(stats.norm.ppf(0.5 + confidence / 2))
    intercepts = float(result.fe_mean[0]) + np.asarray(result.random_effects()["Mean"], dtype=float)

    def implied(coefficient: float) -> float:
        return float(np.mean(expit(intercepts + coefficient) - expit(intercepts)))

    p = float(2 * stats.norm.sf(abs(beta / sd))) if sd > 0 else NAN
    return MixedFit(
        beta, sd, p, implied(beta), implied(beta - z * sd), implied(beta + z * sd),
        float(np.exp(result.vcp_mean[0])),
    )  # fmt: skip


def mixed_comparison(
    episodes: pd.DataFrame, a: str, b: str, metric: str = "passed", confidence: float = 0.95
) -> Comparison:
    """``compare(..., method="mixed")``: the mixed model on the tasks both variants have valid runs of."""
    if metric_kind(metric, episodes if metric in episodes.columns else None) != "binary":
        raise AnalysisError(f"method='mixed' models pass/fail outcomes; {metric!r} is not binary")
    wide = paired_means(episodes, a, b, metric)
    both = wide.dropna(subset=[("mean", a), ("mean", b)])
    xa, xb = both[("mean", a)].to_numpy(float), both[("mean", b)].to_numpy(float)
    rows = episode_rows(episodes, a, b, metric, both.index)
    base = Comparison(
        metric, a, b, len(both), int(np.nanmax(both[["n"]].to_numpy(float))) if len(both) else 0,
        len(wide) - len(both), mean(xa), mean(xb), NAN, NAN, NAN, NAN, TEST, NAN, NAN,
        correlation(xa, xb), NAN, "inconclusive", "", higher_is_better(metric), basis="ratio",
    )  # fmt: skip
    if len(both) < 2 or rows["y"].nunique() < 2:
        why = "fewer than 2 paired tasks" if len(both) < 2 else "every episode has the same outcome"
        return replace(base, method=f"mixed model undefined: {why}")
    fit = fit_mixed(rows, confidence)
    z = float(stats.norm.ppf(0.5 + confidence / 2))
    c = replace(
        base,
        diff=fit.diff,
        ci_low=fit.diff_low,
        ci_high=fit.diff_high,
        p_value=fit.p_value,
        ratio=math.exp(fit.log_odds_ratio),
        ratio_ci_low=math.exp(fit.log_odds_ratio - z * fit.sd),
        ratio_ci_high=math.exp(fit.log_odds_ratio + z * fit.sd),
        method=f"model-implied difference of pass rates (task sd {fit.task_sd:.2f} on the logit scale)",
        ratio_method="odds ratio a / b within a task, Wald on the approximate posterior",
    )
    c = replace(
        c, verdict_ci_low=c.ratio_ci_low, verdict_ci_high=c.ratio_ci_high, verdict_method=c.ratio_method,
        verdict_confidence=confidence, confidence=confidence,
    )  # fmt: skip
    return replace(c, verdict=verdict_of(c))
