import numpy as np
import pytest

from coder_eval.analysis import cost_per_resolved
from tests.analysis.builders import episodes_frame


def test_cost_per_resolved_is_total_cost_over_resolved() -> None:
    df = episodes_frame(
        {"a": {f"t{i}": ["pass", "fail"] for i in range(10)}, "b": {"t1": ["fail"], "t2": ["invalid"]}}
    )
    df["cost_usd"] = np.r_[np.linspace(0.1, 2.0, 20), 0.5, 9.0]
    out = cost_per_resolved(df, n_resamples=999).set_index("variant_id")
    assert out.loc["a", "cost_per_resolved"] == pytest.approx(df["cost_usd"][:20].sum() / 10)
    assert out.loc["a", "ci_low"] < out.loc["a", "cost_per_resolved"] < out.loc["a", "ci_high"]
    assert "paired (cost, resolved)" in out.loc["a", "method"]
    assert (
        np.isnan(out.loc["b", "cost_per_resolved"])
        and out.loc["b", "method"] == "undefined: nothing resolved"
    )
    assert out.loc["b", "n_invalid_excluded"] == 1


def test_unknown_costs_are_excluded_and_counted() -> None:
    df = episodes_frame({"a": {"t1": ["pass"], "t2": ["pass"], "t3": ["pass"]}})
    df["cost_usd"] = [1.0, np.nan, 3.0]
    row = cost_per_resolved(df, n_resamples=199).iloc[0]
    assert (row["n_cost_missing_excluded"], row["cost_per_resolved"]) == (1, 2.0)
