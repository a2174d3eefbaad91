"""The predictive total of a planned run: the planned episodes' own noise included, unseen tasks drawn
like the seen ones, labelled approximate with few tasks, and holding the actual total as often as it
says."""

from __future__ import annotations

import itertools
from collections import Counter, defaultdict

import numpy as np
import pytest

from coder_eval.analysis.stats.predictive_total import predictive_total, resampled


def test_the_total_is_labelled_and_wider_than_its_mean_alone() -> None:
    seen = {f"t{i}": [float(v), 1.2 * float(v)] for i, v in enumerate(np.geomspace(0.5, 4, 25))}
    got = predictive_total(seen, planned_tasks=25, per_task=2)
    assert not got.approximate and got.note == "log-normal predictive; 25 of 25 planned tasks seen"
    assert got.low < sum(sum(v) for v in seen.values()) < got.high
    alike = predictive_total({t: [v[0], v[0]] for t, v in seen.items()}, planned_tasks=25, per_task=2)
    assert alike.high > alike.low  # repeats that never differed still leave the tasks' spread
    few = predictive_total({"a": [1.0, 2.0]}, planned_tasks=40, per_task=3)
    assert few.approximate and few.note.startswith("approximate: ") and few.high > few.low


def test_a_value_of_zero_falls_back_to_resampling() -> None:
    got = predictive_total({"a": [0.0, 1.0], "b": [2.0, 2.0]}, planned_tasks=2, per_task=2)
    assert "resampled tasks and episodes" in got.note and 0 <= got.low <= got.high <= 8


def test_resampling_draws_tasks_then_episodes_with_the_exact_chances() -> None:
    """Two seen tasks ([0, 1] and [2, 2]), two planned tasks of two episodes each: the seen tasks are
    resampled, then each episode is one of its task's. The chance of each total, enumerated, against
    200,000 draws (Monte Carlo standard error at most 0.001)."""
    values = [np.array([0.0, 1.0]), np.array([2.0, 2.0])]
    exact: defaultdict[float, float] = defaultdict(float)
    for pool in itertools.product(range(2), repeat=2):
        episodes = [[values[t][e] for e in range(2)] for t in pool for _ in range(2)]
        for picked in itertools.product(*episodes):
            exact[sum(picked)] += 1 / 64

    totals = resampled(values, planned=2, per=2, draws=200_000, rng=np.random.default_rng(3))

    drawn = Counter(totals.tolist())
    assert set(drawn) == set(exact)
    assert max(abs(drawn[k] / len(totals) - p) for k, p in exact.items()) < 0.005
    unseen = resampled(values, planned=5, per=1, draws=200_000, rng=np.random.default_rng(4))
    assert unseen.mean() == pytest.approx(5 * 1.25, abs=0.02)  # every planned task one of the seen


@pytest.mark.slow
@pytest.mark.parametrize(("seen_tasks", "seen_runs"), [(40, 3), (5, 3)])
def test_the_predictive_interval_holds_the_planned_runs_total(seen_tasks: int, seen_runs: int) -> None:
    """A planned run of 40 tasks x 3 episodes with heavy tails (task log-means sd 1.5, episodes sd 0.8
    on the log scale) from earlier runs of all 40 tasks, or of only 5: the interval must hold the
    planned run's actual total in at least 93.5 % of 400 simulated plans (a bootstrap of task means
    held it in 80 % and 72 %). Monte Carlo standard error at 95 %: 1.1 points; 96-97 % is expected."""
    rng = np.random.default_rng(seen_tasks)
    covered = 0
    for i in range(400):
        m = rng.normal(-3, 1.5, 40)
        seen = {f"t{t}": list(np.exp(m[t] + rng.normal(0, 0.8, seen_runs))) for t in range(seen_tasks)}
        total = float(np.exp(m[:, None] + rng.normal(0, 0.8, (40, 3))).sum())
        got = predictive_total(seen, 40, 3, seed=i)
        covered += got.low <= total <= got.high
    assert covered / 400 >= 0.935
