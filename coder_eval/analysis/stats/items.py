"""Tasks across a history of runs: which are flaky, which cannot separate variants, and how well
each one discriminates (item analysis); and how many tasks like the discriminating ones a suite needs.

- **Flaky**: one task under one configuration (the same resolved task hash, agent and model: a
  variant's settings included) whose pass rate differs between runs more than repeat-to-repeat chance
  allows. The test is of homogeneity of the runs' pass rates: the chi-square statistic of the
  runs × (pass, fail) table, its p-value by permutation (episodes shuffled between runs, 9,999
  resamples, seeded; exact enough at small counts where the chi-square distribution is not), Holm
  across every task and configuration tested (``flaky``), with the Benjamini-Hochberg list at a 5 %
  false discovery rate beside it (``flaky_fdr``: more found, a few of them by chance); ``detectable``
  says how many of a task's runs must fail before either list can name it. Only configurations with
  at least two runs are tested.
- **Non-discriminating**: a task that every configuration in the history always passes, or always
  fails (at least two configurations): it cannot tell variants apart.
- **Item analysis** over configurations (a run's variant is one "respondent"): difficulty is one
  minus the task's mean pass rate; discrimination is the corrected item-total correlation, Pearson's r between
  the task's pass rate and the mean pass rate on the other tasks (with one repeat, the point-biserial
  correlation); ``note`` says why it is undefined where it is.
- **A smaller suite** (``held_out`` + ``smaller_suite``): the tasks are chosen on data that does not
  size the suite (the older runs, or the even repeats of a single run), so the size is not flattered by
  the choice.

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
from coder_eval.analysis.stats.metrics import metric_values
from coder_eval.analysis.stats.power import power_at, required_tasks
from coder_eval.errors import AnalysisError

FLAKY_COLUMNS = ["task_id", "config", "n_runs", "n_episodes", "pass_rate", "rates", "statistic",
                 "p_value", "p_holm", "flaky", "p_fdr", "flaky_fdr"]  # fmt: skip
FLAKY_METHOD = "chi-square statistic of runs x (pass, fail), permutation p-value, Holm across tasks"
FDR_METHOD = "Benjamini-Hochberg"


def valid(episodes: pd.DataFrame) -> pd.DataFrame:
    """The measured episodes, with ``passed`` as float (read from the outcome where it is missing, as
    every table reads it) and a configuration key per episode."""
    kept = episodes[episodes["outcome"] != "invalid"]
    hashes = (
        kept["task_hash"].astype(object) if "task_hash" in kept.columns else pd.Series(None, index=kept.index)
    )
    label = kept["variant_id"].astype(str) + " " + kept["agent"].astype(str) + " " + kept["model"].astype(str)
    config = [h if isinstance(h, str) and h else other for h, other in zip(hashes, label, strict=True)]
    return kept.assign(passed=metric_values(kept, "passed").to_numpy(float), config=config)


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
    frame = pd.DataFrame(rows, columns=FLAKY_COLUMNS[:-4])
    holm = multipletests(frame["p_value"], method="holm")[1] if len(frame) else []
    fdr = multipletests(frame["p_value"], method="fdr_bh")[1] if len(frame) else []
    return frame.assign(
        p_holm=holm,
        flaky=np.asarray(holm) < alpha if len(frame) else [],
        p_fdr=fdr,
        flaky_fdr=np.asarray(fdr) < alpha if len(frame) else [],
    )


class Detectable(NamedTuple):
    """How many of a task's runs must fail every repeat (the others passing every one) before the flaky
    lists can name it, at this many runs, repeats and tests."""

    n_runs: int
    repeats: int
    n_tested: int
    failing_runs: int | None
    """The fewest failing runs that reach alpha / n_tested (None: no number of them does): the bar of
    the Holm list, and of the FDR list for a lone flaky task (k flaky tasks lower the FDR bar k-fold)."""


def detectable(n_runs: int, repeats: int, n_tested: int, alpha: float = 0.05, seed: int = SEED) -> Detectable:
    """What the flaky lists can see: the fewest of ``n_runs`` runs (``repeats`` episodes each) that must
    fail every repeat, the others passing, for the permutation test to reach alpha / ``n_tested``.

    Example: ``detectable(10, 3, 40).failing_runs`` -> ``2`` (with one repeat each: ``None``)
    """
    for failing in range(1, n_runs // 2 + 1):
        groups = [np.zeros(repeats) if i < failing else np.ones(repeats) for i in range(n_runs)]
        if homogeneity(groups, seed)[1] < alpha / max(n_tested, 1):
            return Detectable(n_runs, repeats, n_tested, failing)
    return Detectable(n_runs, repeats, n_tested, None)


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
    """Difficulty (1 − mean pass rate) and discrimination (corrected item-total r) per task, over the
    configurations (run and variant) that ran it: r across them between the task's pass rate and
    their mean pass rate on the other tasks they ran. ``note`` says why a discrimination is
    undefined (fewer than 3 such configurations, or no spread to correlate)."""
    kept = valid(episodes)
    matrix = kept.pivot_table(
        index=["run_id", "variant_id"], columns="task_id", values="passed", aggfunc="mean"
    )
    rows = []
    for task in matrix.columns:
        ran = matrix[matrix[task].notna()]
        rest = ran.drop(columns=task).mean(axis=1)
        item, rest = ran[task][rest.notna()], rest[rest.notna()]
        r, note = NAN, ""
        if len(item) < 3:
            note = f"needs 3 configurations that ran it and another task ({len(item)} did)"
        elif not item.std() > 0:
            note = "no spread: every configuration had the same pass rate on it"
        elif not rest.std() > 0:
            note = "no spread in the other tasks' pass rates"
        else:
            r = float(stats.pearsonr(item, rest).statistic)
        rate = float(ran[task].mean())
        rows.append([task, rate, 1 - rate, r, len(item), note])
    columns = ["task_id", "pass_rate", "difficulty", "discrimination", "n_configs", "note"]
    return pd.DataFrame(rows, columns=columns)


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
    sized_on: str = ""
    """Which data sized it, and which chose the tasks (``held_out``)."""


class HeldOut(NamedTuple):
    """A history split so that the data that chooses the tasks is not the data that sizes the suite."""

    choose: pd.DataFrame
    """Episodes the steady tasks are chosen on."""
    size: pd.DataFrame
    """Episodes of one run with two variants that size the suite."""
    run_id: str
    how: str


def held_out(episodes: pd.DataFrame) -> HeldOut | str:
    """The newest run with two variants sizes the suite; the tasks are chosen on the other runs, or
    (one run) on its even repeats while its odd ones size it. A reason instead when neither is there.

    Example: ``held_out(history).how`` -> ``'sized on run r3; tasks chosen on the 3 other runs'``
    """
    newest_first = list(dict.fromkeys(map(str, episodes["run_id"])))[::-1]
    pairs = [r for r in newest_first if episodes.loc[episodes["run_id"] == r, "variant_id"].nunique() > 1]
    if not pairs:
        return "no run with two variants to size a suite on"
    run = pairs[0]
    mine = episodes["run_id"].astype(str) == run
    if (~mine).any():
        others = episodes.loc[~mine, "run_id"].nunique()
        how = f"sized on run {run}; tasks chosen on the {others} other run{'s' if others > 1 else ''}"
        return HeldOut(episodes[~mine], episodes[mine], run, how)
    one = episodes[mine]
    if one["repeat"].nunique() < 2:
        return f"run {run} alone, one repeat: no data left to size a suite on that did not choose its tasks"
    even = one["repeat"] % 2 == 0
    how = f"sized on run {run}'s odd repeats; tasks chosen on its even repeats"
    return HeldOut(one[even], one[~even], run, how)


def steady_tasks(choose: pd.DataFrame) -> list[str]:
    """The tasks of ``choose`` that are neither flaky nor constant there."""
    flaky = flaky_tasks(choose)
    drop = set(constant_tasks(choose)["task_id"]) | set(flaky.loc[flaky["flaky"], "task_id"])
    return [str(t) for t in dict.fromkeys(choose["task_id"]) if t not in drop]


def smaller_suite(
    episodes: pd.DataFrame, a: str, b: str, keep: Sequence[str], sized_on: str = ""
) -> SuiteSize:
    """From one run's ``a`` vs ``b``: the whole suite's effect and its power there, and how many tasks
    like ``keep`` (say, the discriminating ones) reach that power at the effect they show
    (``power.required_tasks`` on them). ``keep`` must be chosen on other data (``held_out``): chosen on
    these episodes, it flatters the size."""
    subset = episodes[episodes["task_id"].isin(keep)]
    n_tasks, n_kept = int(episodes["task_id"].nunique()), int(subset["task_id"].nunique())
    effect = compare(episodes, a, b, "passed", planned=False).diff
    kept_effect = compare(subset, a, b, "passed", planned=False).diff if n_kept >= 2 else NAN
    have = power_at(episodes, a, b, effect=effect) if effect else NAN
    size = SuiteSize(n_tasks, effect, have, n_kept, kept_effect, None, sized_on)
    if np.isnan(have) or np.isnan(kept_effect) or kept_effect == 0 or have <= 0.05:
        return size
    try:
        return size._replace(required=required_tasks(subset, a, b, effect=kept_effect, power=have))
    except AnalysisError:
        return size
