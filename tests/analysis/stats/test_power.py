import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from coder_eval.analysis import compare, mde, power_at, required_tasks, variance_parts
from coder_eval.analysis.stats.power_model import DifferenceModel, normal_sign_flip_power
from coder_eval.analysis.stats.signflip import sign_flip
from coder_eval.errors import AnalysisError
from tests.analysis.builders import binary_frame, episodes_frame


def pilot(repeats: int, n_tasks: int = 40, seed: int = 5) -> pd.DataFrame:
    """Per-task effects vary a lot (b is a's mirror image), so the between-task part is positive."""
    rng = np.random.default_rng(seed)
    p = rng.beta(0.5, 0.5, size=n_tasks)
    outcomes = {
        v: {
            f"t{i}": ["pass" if rng.random() < q[i] else "fail" for _ in range(repeats)]
            for i in range(n_tasks)
        }
        for v, q in (("a", p), ("b", 1 - p))
    }
    return episodes_frame(outcomes)


THIRDS = np.array([0, 1 / 3, 0, -1 / 3, 2 / 3, 0, 1 / 3, -2 / 3, 0, 1, 1 / 3, 0])


def test_the_model_keeps_the_pilots_shape_and_gains_power_with_effect_and_tasks() -> None:
    model = DifferenceModel.from_pilot(THIRDS, bound=1.0)
    counts = np.array([np.sum(np.isclose(THIRDS, v)) for v in model.values]) + 1 / len(model.values)
    assert model.denominator == 3 and model.weights == pytest.approx(counts / counts.sum())
    moved, weights = model.moved(0.25)
    assert np.sum(moved * weights) == pytest.approx(0.25)
    assert model.power(0.05, 20) < model.power(0.2, 20) < model.power(0.35, 20) < model.power(0.35, 40)


def test_simulated_verdicts_are_those_of_the_exact_test() -> None:
    """The vectorised tests inside the power model give the same answer as ``sign_flip`` run by run:
    on the lattice, and for shifted continuous differences from their subset sums."""
    model = DifferenceModel.from_pilot(THIRDS, bound=1.0, n_sims=60)
    draws = model.draw(0.3, 15)
    assert model.lattice_rejects(draws, 0.05).tolist() == [sign_flip(row).p_value < 0.05 for row in draws]
    continuous = DifferenceModel.from_pilot(np.random.default_rng(2).normal(0.3, 1, 30), n_sims=60)
    for effect in (0.0, 0.3, 1.2):
        expected = [sign_flip(row).p_value < 0.05 for row in continuous.draw(effect, 9)]
        assert continuous.shifted_rejects(effect, 9, 0.05).tolist() == expected
        assert any(expected) or effect == 0.0


def test_mde_is_the_effect_with_eighty_percent_power() -> None:
    model = DifferenceModel.from_pilot(THIRDS, bound=1.0)
    effect = model.mde(20)
    assert model.power(effect, 20) >= 0.8 > model.power(effect - 0.01, 20)
    assert math.isnan(model.mde(5))  # 5 tasks: p >= 0.0625 whatever happens


def test_large_designs_use_the_sign_flip_tests_normal_form() -> None:
    """|Σd| ≥ z √Σd² plus a continuity correction of one lattice step (1/3 here)."""
    model = DifferenceModel.from_pilot(THIRDS, bound=1.0)
    sd = model.sd
    assert model.power(0.1, 400) == pytest.approx(normal_sign_flip_power(0.1, sd, 400, 0.05, 1 / 3))
    z = stats.norm.ppf(0.975)
    threshold = z * math.sqrt(400 * (sd**2 + 0.01)) + 1 / 3
    assert normal_sign_flip_power(0.1, sd, 400, 0.05, 1 / 3) == pytest.approx(
        stats.norm.cdf((400 * 0.1 - threshold) / (20 * sd))
    )


def test_a_pilot_where_nothing_differs_still_plans() -> None:
    df = binary_frame([1] * 10, [1] * 10)
    assert 0 < mde(df, "a", "b") < 1
    assert compare(df, "a", "b").mde == pytest.approx(mde(df, "a", "b"))


def test_mde_and_required_tasks_agree_with_power_at() -> None:
    df = pilot(3)
    effect = 0.3
    needed = required_tasks(df, "a", "b", effect)
    assert (
        power_at(df, "a", "b", effect, n_tasks=needed)
        >= 0.8
        > power_at(df, "a", "b", effect, n_tasks=needed - 1)
    )
    at_40 = mde(df, "a", "b")
    assert power_at(df, "a", "b", at_40) >= 0.8
    assert compare(df, "a", "b").mde == pytest.approx(at_40)


def test_amounts_plan_in_ratios() -> None:
    df = episodes_frame({v: {f"t{i}": ["pass"] * 2 for i in range(16)} for v in ("a", "b")})
    rng = np.random.default_rng(3)
    df["cost_usd"] = rng.lognormal(0, 1, 16).repeat(2).tolist() * 2 * rng.lognormal(0, 0.3, 64)
    ratio = mde(df, "a", "b", "cost_usd")
    assert ratio > 1 and compare(df, "a", "b", "cost_usd").mde_ratio == pytest.approx(ratio)
    assert power_at(df, "a", "b", ratio, "cost_usd") >= 0.8
    assert power_at(df, "a", "b", 1 / ratio, "cost_usd") == pytest.approx(
        power_at(df, "a", "b", ratio, "cost_usd")
    )
    with pytest.raises(AnalysisError, match="ratio"):
        power_at(df, "a", "b", -0.5, "cost_usd")


def test_more_repeats_shrink_only_the_within_task_part() -> None:
    df = pilot(3)
    parts = variance_parts(df, "a", "b")
    assert parts.var_diff == pytest.approx(parts.between + parts.within / 3)
    assert parts.var_at(10) < parts.var_diff
    assert mde(df, "a", "b", n_repeats=10) < mde(df, "a", "b", n_repeats=2)


def test_a_pilot_without_spread_has_no_mde_for_another_k_and_says_so() -> None:
    """Both arms pass every run of every task: the normal model has no variance to scale, so the MDE
    is undefined (NaN), never the 1e-12 a root finder would return, and no number of tasks is planned."""
    df = episodes_frame({v: {f"t{i}": ["pass"] * 3 for i in range(8)} for v in ("a", "b")})
    assert math.isnan(mde(df, "a", "b", n_repeats=5)) and math.isnan(power_at(df, "a", "b", 0.1, n_repeats=5))
    with pytest.raises(AnalysisError, match="no spread"):
        required_tasks(df, "a", "b", 0.1, n_repeats=5)
    assert 0 < mde(df, "a", "b") < 1  # at the pilot's K the lattice model still plans (one pseudo-task)


def test_an_observed_difference_of_minus_one_has_a_power() -> None:
    """The candidate loses every task: the observed effect is the edge of the scale, and its power is 1."""
    df = binary_frame([0] * 8, [1] * 8)
    assert power_at(df, "a", "b", -1.0) == 1.0
    with pytest.raises(AnalysisError, match=r"within \[-1, 1\]"):
        power_at(df, "a", "b", -1.5)


def test_continuous_differences_without_spread_have_no_mde() -> None:
    model = DifferenceModel.from_pilot(np.full(8, 0.25))
    assert model.sd == 0 and math.isnan(model.mde(8))


def test_planning_another_k_needs_a_pilot_with_repeats() -> None:
    with pytest.raises(AnalysisError, match="repeats"):
        mde(pilot(1), "a", "b", n_repeats=3)
    with pytest.raises(AnalysisError, match="non-zero"):
        required_tasks(pilot(1), "a", "b", effect=0.0)
