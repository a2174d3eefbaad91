import math

import numpy as np
import pytest

from coder_eval.analysis import pass_at_k, pass_at_k_table, pass_hat_k, wilson_interval
from coder_eval.errors import AnalysisError
from tests.analysis.builders import episodes_frame

GRID = [(n, c, k) for n in range(1, 11) for c in range(n + 1) for k in range(1, n + 1)]


@pytest.mark.parametrize(("n", "c", "k"), GRID)
def test_pass_at_k_matches_the_binomial_closed_form(n: int, c: int, k: int) -> None:
    assert pass_at_k(n, c, k) == pytest.approx(1 - math.comb(n - c, k) / math.comb(n, k))


@pytest.mark.parametrize(("n", "c", "k"), GRID)
def test_pass_hat_k_matches_the_closed_form(n: int, c: int, k: int) -> None:
    assert pass_hat_k(n, c, k) == pytest.approx(math.comb(c, k) / math.comb(n, k))


@pytest.mark.parametrize(("n", "c", "k"), [(2, 1, 3), (3, 4, 1), (3, 1, 0)])
def test_impossible_arguments_are_refused(n: int, c: int, k: int) -> None:
    with pytest.raises(AnalysisError):
        pass_at_k(n, c, k)
    with pytest.raises(AnalysisError):
        pass_hat_k(n, c, k)


def test_table_averages_per_task_values_and_reports_n_beside_k() -> None:
    df = episodes_frame(
        {"a": {"t1": ["pass", "fail", "fail"], "t2": ["pass", "pass", "pass"], "t3": ["fail", "invalid"]}}
    )
    table = pass_at_k_table(df, ks=[1, 2]).set_index(["k", "measure"])
    row = table.loc[(2, "pass@k")]
    assert row["mean"] == pytest.approx(np.mean([pass_at_k(3, 1, 2), 1.0]))
    assert (row["n_tasks"], row["n_tasks_excluded"], row["n_min"], row["n_max"]) == (2, 1, 3, 3)
    assert table.loc[(1, "pass^k"), "mean"] == pytest.approx(np.mean([1 / 3, 1.0, 0.0]))


@pytest.mark.parametrize("outcome", ["pass", "fail"])
def test_tasks_that_all_agree_still_get_an_interval(outcome: str) -> None:
    df = episodes_frame({"a": {f"t{i}": [outcome] * 3 for i in range(8)}})
    table = pass_at_k_table(df, ks=[1, 2, 3])
    assert (table["ci_high"] - table["ci_low"] > 0.2).all()
    assert set(table["method"]) == {"Wilson over tasks (all equal)"}
    row = table.iloc[0]
    assert (row["ci_low"], row["ci_high"]) == pytest.approx(wilson_interval(8 if outcome == "pass" else 0, 8))
