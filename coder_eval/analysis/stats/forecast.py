"""Before anything runs: what a plan is likely to cost, and how many episodes ``--until-conclusive``
is likely to need to reach a decision for a stated effect.

- ``history`` (``earlier_runs.py``): per variant, the episodes earlier runs of the same tasks
  recorded (tokens, cost, wall time), and which runs they came from.
- ``spend``: the expected total of a metric over the planned episodes with a 95 % predictive
  interval: the planned episodes' own noise included, unseen tasks drawn like the seen ones
  (``predictive_total``), labelled approximate when few tasks were seen.
- ``episodes_to_decision``: simulated suites (task difficulty with logit sd 1, the plan's repeats, a
  logit shift giving the stated effect on average) run through the confidence sequence: the share
  decided by the cap and the spread of episodes spent.
- ``fixed_design``: the smallest fixed design of a given power on the same simulated suites (the
  paired t test on task differences), to say when it is the cheaper choice.

Example::

    seen = history(Path("runs"), task_ids)
    spend(seen["baseline"], "cost_usd", planned_episodes=24)      # Spend(mean=1.9, low=1.2, high=2.8, ...)
    episodes_to_decision(0.2, repeats=3, max_tasks=80, delta=0.2)  # Stops(decided=0.98, ...)
    fixed_design(0.2, 0.8, repeats=3)                               # FixedDesign(tasks=..., power=0.8...)
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy import optimize, stats
from scipy.special import expit

from coder_eval.analysis.stats.earlier_runs import Seen
from coder_eval.analysis.stats.predictive_total import predictive_total
from coder_eval.analysis.stats.sequential import ALPHA, first_decision

FIXED_SIMS = 2000
"""Simulated suites per task count when a fixed design is sized (cheap; its noise would blur the match)."""


class Spend(NamedTuple):
    """Expected total over the planned episodes, its 95 % predictive interval, the earlier episodes
    behind it, and how it was made (``approximate: ...`` when few tasks were seen)."""

    mean: float
    low: float
    high: float
    episodes: int
    note: str = ""


class Stops(NamedTuple):
    """Simulated runs ``--until-conclusive``: share decided by the cap, episodes' median and 10-90 %."""

    decided: float
    median: float
    low: float
    high: float
    episodes: np.ndarray


def spend(
    seen: Seen, metric: str, planned_episodes: int, planned_tasks: int | None = None, seed: int = 0
) -> Spend | None:
    """The total of ``metric`` over ``planned_episodes`` spread over ``planned_tasks`` tasks (default:
    the tasks seen), with its predictive interval (``predictive_total``)."""
    by_task = seen.values.get(metric, {})
    if not by_task:
        return None
    tasks = max(planned_tasks or len(by_task), 1)
    total = predictive_total(by_task, tasks, planned_episodes / tasks, seed)
    n = sum(len(v) for v in by_task.values())
    return Spend(total.mean, total.low, total.high, n, total.note)


def shift_for(effect: float) -> float:
    """The logit shift that raises the mean pass rate (over θ ~ N(0, 1)) by ``effect``."""
    if effect == 0:
        return 0.0
    nodes, weights = np.polynomial.hermite_e.hermegauss(60)
    weights = weights / weights.sum()

    def gap(shift: float) -> float:
        return float(np.sum(weights * (expit(nodes + shift) - expit(nodes)))) - effect

    return float(optimize.brentq(gap, -10.0, 10.0))


def paired_differences(
    shift: float | np.ndarray, tasks: int, repeats: int, rng: np.random.Generator, suites: int = 1
) -> np.ndarray:
    """Simulated per-task paired differences of pass rates (candidate minus baseline task means),
    task difficulty θ ~ N(0, 1) on the logit scale: one row per suite."""
    theta = rng.normal(0.0, 1.0, (suites, tasks))
    base = rng.binomial(repeats, expit(theta)) / repeats
    cand = rng.binomial(repeats, expit(theta + shift)) / repeats
    return np.asarray(cand - base, dtype=float)


def episodes_to_decision(
    effect: float,
    repeats: int,
    max_tasks: int,
    delta: float,
    arms: int = 2,
    sims: int = 200,
    seed: int = 0,
) -> Stops:
    """Episodes a run ``--until-conclusive`` spends (``arms`` x ``repeats`` per task) when the
    candidate's pass rate is ``effect`` higher on average; undecided runs spend the cap."""
    rng, shift = np.random.default_rng(seed), shift_for(effect)
    spent, decided = [], 0
    for _ in range(sims):
        first = first_decision(paired_differences(shift, max_tasks, repeats, rng)[0], delta, ALPHA)
        stop = None if first is None else first[0]
        decided += stop is not None
        spent.append(((stop if stop is not None else max_tasks - 1) + 1) * arms * repeats)
    episodes = np.array(spent)
    low, median, high = np.percentile(episodes, [10, 50, 90])
    return Stops(decided / sims, float(median), float(low), float(high), episodes)


class FixedDesign(NamedTuple):
    """The smallest fixed design (tasks, both arms run ``repeats`` times) with at least the power asked."""

    tasks: int
    power: float
    """Its simulated power (the paired t test on the task differences at alpha)."""

    def episodes(self, repeats: int, arms: int = 2) -> int:
        return self.tasks * repeats * arms


def fixed_power(
    shift: float | np.ndarray, tasks: int, repeats: int, rng: np.random.Generator, sims: int = FIXED_SIMS
) -> float:
    """Power of a fixed design of ``tasks`` tasks: the paired t test on simulated task differences."""
    d = paired_differences(shift, tasks, repeats, rng, sims)
    sd = d.std(axis=1, ddof=1)
    t = np.divide(d.mean(axis=1) * np.sqrt(tasks), sd, out=np.zeros(len(d)), where=sd > 0)
    return float(np.mean(np.abs(t) > stats.t.ppf(1 - ALPHA / 2, tasks - 1)))


def fixed_design(effect: float, power: float, repeats: int, seed: int = 0, most: int = 4000) -> FixedDesign:
    """The fewest tasks (even, from 4) whose fixed design reaches ``power`` (at most 0.99: a power of 1 in
    a finite simulation names no design) for ``effect``; doubling then bisection, each count simulated
    with its own seeded draws. Example: ``fixed_design(0.2, 0.8, repeats=3).tasks`` -> about 30"""
    power, shift = min(power, 0.99), shift_for(effect)

    def reached(tasks: int) -> float:
        return fixed_power(shift, tasks, repeats, np.random.default_rng([seed, tasks]))

    high = 4
    while reached(high) < power and high < most:
        high *= 2
    low = high // 2 if high > 4 else 2
    while high - low > 2:
        middle = (low + high) // 2 // 2 * 2
        low, high = (low, middle) if reached(middle) >= power else (middle, high)
    return FixedDesign(high, reached(high))
