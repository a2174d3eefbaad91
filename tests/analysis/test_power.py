import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from coder_eval.analysis import mde, required_tasks, variance_parts
from coder_eval.errors import AnalysisError

from .builders import binary_frame, episodes_frame

Z = stats.norm.ppf(0.975) + stats.norm.ppf(0.8)


def pilot(repeats: int, n_tasks: int = 40) -> pd.DataFrame:
    """Per-task effects vary a lot (b is a's mirror image), so the between-task part is positive."""
    rng = np.random.default_rng(5)
    p = rng.beta(0.5, 0.5, size=n_tasks)
    outcomes = {
        v: {
            f"t{i}": ["pass" if rng.random() < q[i] else "fail" for _ in range(repeats)]
            for i in range(n_tasks)
        }
        for v, q in (("a", p), ("b", 1 - p))
    }
    return episodes_frame(outcomes)


def test_mde_at_the_pilot_design_is_z_times_the_paired_se() -> None:
    a, b = [1, 0, 1, 1, 0, 1, 0, 1], [0, 0, 1, 0, 0, 1, 1, 0]
    d = np.array(a) - np.array(b)
    expected = Z * d.std(ddof=1) / math.sqrt(len(d))
    assert mde(binary_frame(a, b), "a", "b") == pytest.approx(expected)
    assert required_tasks(binary_frame(a, b), "a", "b", effect=expected) == pytest.approx(len(d), abs=1)


def test_more_repeats_shrink_only_the_within_task_part() -> None:
    parts = variance_parts(pilot(3), "a", "b")
    assert parts.var_diff == pytest.approx(parts.between + parts.within / 3)
    assert parts.var_at(10) < parts.var_diff
    df = pilot(3)
    assert mde(df, "a", "b", n_repeats=10) < mde(df, "a", "b")
    assert mde(df, "a", "b", n_tasks=160) == pytest.approx(mde(df, "a", "b") / 2)


def test_planning_another_k_needs_a_pilot_with_repeats() -> None:
    with pytest.raises(AnalysisError, match="repeats"):
        mde(pilot(1), "a", "b", n_repeats=3)
