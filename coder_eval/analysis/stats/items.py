"""Tasks across a history of runs: which are flaky, which cannot separate variants, and how well
each one discriminates (item analysis); and how many tasks like the discriminating ones a suite needs.

- **Flaky**: one task under one configuration (the same resolved task hash, agent and model: a
  variant's settings included) whose pass rate differs between runs more than repeat-to-repeat chance
  allows. The test is of homogeneity of the runs' pass rates: the chi-square statistic of the
  runs × (pass, fail) table, its p-value by permutation (episodes shuffled between runs, 9,999
  resamples, seeded; exact enough at small counts where the chi-square distribution is not), Holm
  across every task and configuration tested. Only configurations with at least two runs are tested.
- **Non-discriminating**: a task that every configuration in the history always passes, or always
  fails (at least two configurations): it cannot tell variants apart.
- **Item analysis** over configurations (a run's variant is one "respondent"): difficulty is one
  minus the task's mean pass rate; discrimination is the corrected item-total correlation, Pearson's r between
  the task's pass rate and the mean pass rate on the other tasks (with one repeat, the point-biserial
  correlation).

Example::

    runs = load_store(store)
    flaky_tasks(runs.episodes)       # task_id, config, n_runs, rates, statistic, p_value, p_holm, flaky
    constant_tasks(runs.episodes)    # task_id, outcome ('always passes' / 'always fails'), evidence
    item_analysis(runs.episodes)     # task_id, pass_rate, difficulty, discrimination, n_configs
    smaller_suite(one_run.episodes, "with_skill", "baseline", keep=["a", "b"])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import pandas as pd
from scipy import stats
from statsmodels.stats.multitest import multipletests

from coder_eval.analysis.stats.compare import compare
from coder_eval.analysis.stats.intervals import N_RESAMPLES, NAN, SEED
from coder_eval.analysis.stats.power import power_at, required_tasks
from coder_eval.errors import AnalysisError

FLAKY_COLUMNS = ["task_id", "config", "n_runs", "n_episodes", "pass_rate", "rates", "statistic",
                 "p_value", "p_holm", "flaky"]  # fmt: skip
FLAKY_METHOD = "chi-square statistic of runs x (pass, fail), permutation p-value, Holm across tasks"


def valid(episodes: pd.DataFrame) -> pd.DataFrame:
    """The measured episodes, with ``passed`` as float and a configuration key per episode."""
    kept = episodes[episodes["outcome"] != "invalid"]
    hashes = (
        kept["task_hash"].astype(object) if "task_hash" in kept.columns else pd.Series(None, index=kept.index)
    )
    label = kept["variant_id"].astype(str) + " " + kept["agent"].astype(str) + " " + kept["model"].astype(str)
    config = [h if isinstance(h, str) and h else other for h, other in zip(hashes, label, strict=True)]
    return kept.assign(passed=kept["passed"].astype(float), config=config)


def chi_square(passed: np.ndarray, runs: np.ndarray, axis: int = -1) -> np.ndarray:
    """Pearson's chi-square of the runs x (pass, fail) table, for outcomes ``passed`` (0/1, any
    leading batch axes) and each outcome's run index ``runs``; 0 when every outcome is the same."""
    passed = np.moveaxis(np.asarray(passed, float), axis, -1)
    groups = np.asarray(runs, int)
    if groups.ndim > 1:
        groups = np.moveaxis(groups, axis, -1)
    one_hot = np.eye(int(groups.max()) + 1)[groups]  # (..., n, runs)
    n_run = one_hot.sum(axis=-2)
    wins = np.einsum("...n,...nr->...r", passed, one_hot)
    rate = passed.mean(axis=-1, keepdims=True)
    expected_pass, expected_fail = n_run * rate, n_run * (1 - rate)
    with np.errstate(invalid="ignore", divide="ignore"):
        terms = (wins - expected_pass) ** 2 / expected_pass + (wins - expected_pass) ** 2 / expected_fail
    total: np.ndarray = np.where(np.isfinite(terms), terms, 0.0).sum(axis=-1)
    return total


def homogeneity(groups: list[np.ndarray], seed: int = SEED) -> tuple[float, float]:
    """(statistic, permutation p) of equal pass rates across the groups (episodes shuffled between
    them: the pairing of outcomes and run labels permuted)."""
    passed = np.concatenate(groups).astype(float)
    runs = np.concatenate([np.full(len(g), i) for i, g in enumerate(groups)])
    observed = float(chi_square(passed, runs))
    if observed == 0:
        return 0.0, 1.0
    result = stats.permutation_test(
        (passed, runs), chi_square, permutation_type="pairings", n_resamples=N_RESAMPLES,
        alternative="greater", random_state=seed, vectorized=True,
    )  # fmt: skip
    return observed, float(result.pvalue)


def flaky_tasks(episodes: pd.DataFrame, alpha: float = 0.05, seed: int = SEED) -> pd.DataFrame:
    """Every task and configuration run in two runs or more, tested for run-to-run variation."""
    rows = []
    for (task, config), group in valid(episodes).groupby(["task_id", "config"], sort=True):
        per_run = [g["passed"].to_numpy() for _, g in group.groupby("run_id", sort=True)]
        if len(per_run) < 2:
            continue
        statistic, p = homogeneity(per_run, seed)
        rates = ", ".join(f"{int(g.sum())}/{len(g)}" for g in per_run)
        rows.append([task, config, len(per_run), len(group), group["passed"].mean(), rates, statistic, p])
    frame = pd.DataFrame(rows, columns=FLAKY_COLUMNS[:-2])
    holm = multipletests(frame["p_value"], method="holm")[1] if len(frame) else []
    return frame.assign(p_holm=holm, flaky=np.asarray(holm) < alpha if len(frame) else [])


def constant_tasks(episodes: pd.DataFrame) -> pd.DataFrame:
    """Tasks that every configuration (two or more) always passed, or always failed."""
    rows = []
    for task, group in valid(episodes).groupby("task_id", sort=True):
        configs, rate = group["config"].nunique(), group["passed"].mean()
        if configs >= 2 and rate in (0.0, 1.0):
            outcome = "always passes" if rate == 1.0 else "always fails"
            evidence = f"{len(group)} episodes, {configs} configurations, {group['run_id'].nunique()} runs"
            rows.append([task, outcome, len(group), configs, evidence])
    return pd.DataFrame(rows, columns=["task_id", "outcome", "n_episodes", "n_configs", "evidence"])


def item_analysis(episodes: pd.DataFrame) -> pd.DataFrame:
    """Difficulty (mean pass rate) and discrimination (corrected item-total r) per task, over the
    configurations (run and variant) that ran every task of the table."""
    kept = valid(episodes)
    matrix = kept.pivot_table(
        index=["run_id", "variant_id"], columns="task_id", values="passed", aggfunc="mean"
    )
    matrix = matrix.dropna(axis=0)
    rows = []
    for task in matrix.columns:
        rest = matrix.drop(columns=task).mean(axis=1)
        item = matrix[task]
        r = NAN
        if len(matrix) >= 3 and item.std() > 0 and rest.std() > 0:
            r = float(stats.pearsonr(item, rest).statistic)
        rows.append([task, float(item.mean()), 1 - float(item.mean()), r, len(matrix)])
    return pd.DataFrame(rows, columns=["task_id", "pass_rate", "difficulty", "discrimination", "n_configs"])


class SuiteSize(NamedTuple):
    """What a suite of tasks like ``keep`` needs for the power the whole suite has."""

    n_tasks: int
    effect: float
    """The whole suite's observed difference in pass rate (a − b)."""
    power: float
    """The whole suite's power at that effect (``power.power_at``)."""
    n_kept: int
    kept_effect: float
    """The observed difference on the kept tasks."""
    required: int | None
    """Tasks drawn like the kept ones that reach ``power`` at ``kept_effect``; None when undefined."""


def smaller_suite(episodes: pd.DataFrame, a: str, b: str, keep: Sequence[str]) -> SuiteSize:
    """From one run's ``a`` vs ``b``: the whole suite's effect and its power there, and how many tasks
    like ``keep`` (say, the discriminating ones) reach that power at the effect they show
    (``power.required_tasks`` on them)."""
    subset = episodes[episodes["task_id"].isin(keep)]
    n_tasks, n_kept = int(episodes["task_id"].nunique()), int(subset["task_id"].nunique())
    effect = compare(episodes, a, b, "passed").diff
    kept_effect = compare(subset, a, b, "passed").diff if n_kept >= 2 else NAN
    have = power_at(episodes, a, b, effect=effect) if effect else NAN
    size = SuiteSize(n_tasks, effect, have, n_kept, kept_effect, None)
    if np.isnan(have) or np.isnan(kept_effect) or kept_effect == 0 or have <= 0.05:
        return size
    try:
        return size._replace(required=required_tasks(subset, a, b, effect=kept_effect, power=have))
    except AnalysisError:
        return size
