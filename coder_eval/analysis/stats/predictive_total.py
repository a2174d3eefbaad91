"""What a planned run will spend: a predictive interval for the total of an amount (tokens, cost, time)
over the planned episodes, from earlier episodes of some of its tasks.

A total over planned episodes varies for three reasons: which tasks the plan holds (unseen ones are
new draws of task difficulty), how each of its episodes happens to go (run-to-run noise, which an
interval for the *mean* per episode leaves out), and how well the earlier episodes pin down both.
The model is log-normal on two levels: a task's log mean m ~ N(μ, τ²), an episode's log value
~ N(m, σ²). Every parameter is drawn from its posterior under the usual flat priors (σ² and the
spread of the task means from scaled inverse chi-square laws, μ from a normal: ``scipy.stats``), each
planned task's m from its own earlier episodes when it has some (else from N(μ, τ²)), and every
planned episode from N(m, σ²); the interval holds the middle 95 % of the simulated totals. When no
task was seen twice (or its repeats never differed), σ² cannot be told from τ², and every planned task
is drawn afresh with its episodes equal (all the spread between tasks: the widest reading, never a
point). Values of 0 or below have no logarithm:
then tasks and their episodes are resampled instead.

The interval is ``approximate`` when fewer than ``FEW_TASKS`` tasks were seen: the log-normal shape
is then more assumed than seen.

Example::

    predictive_total({"a": [1.0, 3.0], "b": [4.0]}, planned_tasks=40, per_task=3)
    # Total(mean=..., low=..., high=..., approximate=True, note='2 of 40 planned tasks seen ...')
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple

import numpy as np
from scipy import stats

DRAWS = 4000
FEW_TASKS = 20
"""Fewer earlier tasks than this and the interval is labelled approximate."""
MAX_CELLS = 4_000_000
"""Simulated episodes at most held at once (the draws are cut to fit)."""


class Total(NamedTuple):
    """The expected total over the planned episodes, its 95 % predictive interval, and how it was made."""

    mean: float
    low: float
    high: float
    approximate: bool
    note: str


def predictive_total(
    by_task: Mapping[str, Sequence[float]], planned_tasks: int, per_task: float, seed: int = 0
) -> Total:
    """The total of ``planned_tasks`` tasks × ``per_task`` episodes (the tasks of ``by_task`` among them)."""
    per = max(round(per_task), 1)
    values = [np.asarray(v, dtype=float) for v in by_task.values() if len(v)]
    planned_tasks = max(planned_tasks, len(values))
    draws = max(200, min(DRAWS, MAX_CELLS // max(planned_tasks * per, 1)))
    rng = np.random.default_rng(seed)
    if all(np.all(v > 0) for v in values):
        with np.errstate(over="ignore"):  # a few seen tasks can put no bound on the top end: inf
            totals = log_normal(values, planned_tasks, per, draws, rng)
        how = "log-normal predictive"
    else:
        totals = resampled(values, planned_tasks, per, draws, rng)
        how = "resampled tasks and episodes (a value of 0 or less)"
    low, high = np.percentile(totals, [2.5, 97.5])
    few = len(values) < FEW_TASKS
    note = f"{how}; {len(values)} of {planned_tasks} planned tasks seen"
    if few:
        note = f"approximate: {note}"
    return Total(float(np.mean(totals)), float(low), float(high), few, note)


def log_normal(
    values: list[np.ndarray], planned: int, per: int, draws: int, rng: np.random.Generator
) -> np.ndarray:
    """Simulated totals under the two-level log-normal model, parameters drawn from their posterior."""
    logs = [np.log(v) for v in values]
    means = np.array([x.mean() for x in logs])
    counts = np.array([len(x) for x in logs], dtype=float)
    within_df = float(np.sum(counts - 1))
    between_df = max(len(logs) - 1, 1)
    spread = float(np.var(means, ddof=1)) if len(logs) > 1 else float(np.var(np.concatenate(logs)))
    spread = max(spread, 1e-12)
    spread_draws = between_df * spread / stats.chi2.rvs(between_df, size=draws, random_state=rng)
    # centres lowered by the variance they carry, so that exp() of them is unbiased (a log-normal's mean
    # grows with its variance: uncorrected, a total over many tasks comes out too high)
    mu = stats.norm.rvs(
        means.mean() - spread_draws / len(logs), np.sqrt(spread_draws / len(logs)), random_state=rng
    )
    within = float(sum(np.sum((x - x.mean()) ** 2) for x in logs)) / within_df if within_df else 0.0
    if within == 0:  # nothing seen twice, or repeats all alike: every planned task afresh, its episodes equal
        m = stats.norm.rvs(
            mu[:, None], np.sqrt(spread_draws)[:, None], size=(draws, planned), random_state=rng
        )
        return np.asarray(per * np.exp(m).sum(axis=1), dtype=float)
    sigma2 = within_df * within / stats.chi2.rvs(within_df, size=draws, random_state=rng)
    tau2 = np.maximum(spread_draws - sigma2 * float(np.mean(1 / counts)), 0.0)
    error = sigma2[:, None] / counts[None, :]
    seen_m = stats.norm.rvs(means[None, :] - error, np.sqrt(error), random_state=rng)
    new_m = stats.norm.rvs(
        mu[:, None], np.sqrt(tau2)[:, None], size=(draws, planned - len(logs)), random_state=rng
    )
    m = np.concatenate([seen_m, new_m], axis=1)
    episodes = stats.norm.rvs(
        m[:, :, None], np.sqrt(sigma2)[:, None, None], size=(draws, planned, per), random_state=rng
    )
    return np.asarray(np.exp(episodes).sum(axis=(1, 2)), dtype=float)


def resampled(
    values: list[np.ndarray], planned: int, per: int, draws: int, rng: np.random.Generator
) -> np.ndarray:
    """Simulated totals without a model: in each draw the seen tasks resampled with replacement, each
    other planned task one of those, and each of a task's ``per`` episodes one of its earlier episodes
    (with replacement); as arrays, as many draws at once as ``MAX_CELLS`` episodes allow."""
    seen, flat = len(values), np.concatenate(values)
    lengths = np.array([len(v) for v in values])
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    totals = np.empty(draws)
    step = max(1, MAX_CELLS // max(planned * per, 1))
    for first in range(0, draws, step):
        n = min(step, draws - first)
        pool = rng.integers(0, seen, (n, seen))  # the seen tasks, resampled
        others = np.take_along_axis(pool, rng.integers(0, seen, (n, planned - seen)), axis=1)
        tasks = np.concatenate([pool, others], axis=1)  # (n, planned): which seen task each one is
        picks = (rng.random((n, planned, per)) * lengths[tasks][..., None]).astype(np.int64)
        totals[first : first + n] = flat[starts[tasks][..., None] + picks].sum(axis=(1, 2))
    return totals
