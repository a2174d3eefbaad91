"""The forecast before a run: the expected total with its interval, the effect's logit shift, and
episodes to a decision by simulation (reading earlier runs: ``test_earlier_runs.py``)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate, stats
from scipy.special import expit

from coder_eval.analysis.stats.earlier_runs import Seen
from coder_eval.analysis.stats.forecast import (
    episodes_to_decision,
    fixed_design,
    fixed_power,
    shift_for,
    spend,
)


def test_spend_is_a_predictive_total_labelled_approximate_with_few_tasks() -> None:
    seen = Seen()
    for task, values in {"a": [1.0, 3.0], "b": [4.0], "c": [6.0]}.items():
        for value in values:
            seen.add(task, "cost_usd", value)

    got = spend(seen, "cost_usd", planned_episodes=12, planned_tasks=4)

    assert got is not None and got.episodes == 4 and got.low < 12 * 3.5 < got.high
    assert got.note == "approximate: log-normal predictive; 3 of 4 planned tasks seen"
    assert spend(seen, "total_tokens", 10) is None
    seen.add("d", "cost_usd", 0.0)  # no logarithm: resampled instead
    assert spend(seen, "cost_usd", 12, 4).note.startswith("approximate: resampled")  # type: ignore[union-attr]


def test_the_shift_gives_the_effect_on_average() -> None:
    shift = shift_for(0.2)
    mean = integrate.quad(lambda t: (expit(t + shift) - expit(t)) * stats.norm.pdf(t), -12, 12)[0]

    assert mean == pytest.approx(0.2, abs=1e-6) and shift_for(0.0) == 0.0


def test_a_larger_effect_decides_sooner_and_none_rarely_calls() -> None:
    small = episodes_to_decision(0.2, repeats=3, max_tasks=60, delta=0.2, sims=60)
    large = episodes_to_decision(0.4, repeats=3, max_tasks=60, delta=0.2, sims=60)

    assert large.median < small.median <= 360 and large.decided >= small.decided
    assert np.all((large.episodes % 6 == 0) & (large.episodes <= 360))


def test_the_fixed_design_is_the_fewest_tasks_of_the_power_asked() -> None:
    eighty, ninety = fixed_design(0.2, 0.8, repeats=3), fixed_design(0.2, 0.9, repeats=3)
    assert eighty.power >= 0.8 and ninety.power >= 0.9 and eighty.tasks < ninety.tasks
    shift = shift_for(0.2)
    assert fixed_power(shift, eighty.tasks - 2, 3, np.random.default_rng([0, eighty.tasks - 2])) < 0.8
    assert eighty.episodes(3) == eighty.tasks * 6
