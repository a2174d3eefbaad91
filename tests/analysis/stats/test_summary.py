import numpy as np
import pytest
from statsmodels.stats.proportion import proportion_confint

from coder_eval.analysis import summarize, wilson_interval
from coder_eval.analysis.stats.estimate import effective_count
from coder_eval.errors import AnalysisError
from tests.analysis.builders import episodes_frame

OUTCOMES = {
    "a": {"t1": ["pass", "fail"], "t2": ["pass", "pass"], "t3": ["invalid", "fail"]},
    "b": {"t1": ["pass"], "t2": ["fail"], "t3": ["invalid"]},
    "c": {"t1": ["invalid"]},
}


def test_one_run_per_task_gets_wilson() -> None:
    row = summarize(episodes_frame(OUTCOMES)).set_index("variant_id").loc["b"]
    assert (row["n_tasks"], row["n_episodes"], row["n_invalid_excluded"], row["method"]) == (
        2,
        2,
        1,
        "Wilson",
    )
    assert (row["ci_low"], row["ci_high"]) == pytest.approx(wilson_interval(1, 2))


def test_repeats_get_wilson_on_the_effective_number_of_episodes() -> None:
    row = summarize(episodes_frame(OUTCOMES)).set_index("variant_id").loc["a"]
    means, counts = np.array([0.5, 1.0, 0.0]), np.array([2.0, 2.0, 1.0])
    n_eff, deff = effective_count(means, counts)
    assert row["mean"] == pytest.approx(0.5)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx(
        proportion_confint(0.5 * n_eff, n_eff, method="wilson")
    )
    assert row["n_invalid_excluded"] == 1 and row["method"].startswith(f"Wilson, design effect {deff:.2f}")


def test_fixed_tasks_view_is_offered() -> None:
    df = episodes_frame({"a": {f"t{i}": ["pass", "fail", "pass"] for i in range(4)}})
    population = summarize(df).iloc[0]
    fixed = summarize(df, estimand="fixed_tasks").iloc[0]
    assert fixed["mean"] == population["mean"] and fixed["method"].startswith("fixed tasks")
    with pytest.raises(AnalysisError, match="estimand"):
        summarize(df, estimand="everything")  # type: ignore[arg-type]


def test_variant_with_only_invalid_episodes_is_shown_and_counted() -> None:
    row = summarize(episodes_frame(OUTCOMES)).set_index("variant_id").loc["c"]
    assert row["n_tasks"] == 0 and row["n_invalid_excluded"] == 1 and np.isnan(row["mean"])


def test_all_pass_and_all_fail() -> None:
    df = episodes_frame(
        {"a": {f"t{i}": ["pass"] for i in range(5)}, "b": {f"t{i}": ["fail"] for i in range(5)}}
    )
    out = summarize(df).set_index("variant_id")
    assert out.loc["a", "ci_high"] == pytest.approx(1.0) and out.loc["a", "ci_low"] == pytest.approx(
        0.566, abs=1e-3
    )
    assert out.loc["b", "ci_low"] == pytest.approx(0.0)


def test_costs_get_a_cluster_bootstrap_and_missing_costs_are_counted() -> None:
    df = episodes_frame({"a": {f"t{i}": ["pass", "fail"] for i in range(6)}})
    df["cost_usd"] = [0.1, 0.3, 0.2, np.nan, 1.5, 0.1, 0.2, 0.2, 0.4, 0.5, 0.3, 0.9]
    row = summarize(df, "cost_usd", n_resamples=999).iloc[0]
    assert row["method"].startswith("cluster bootstrap BCa") and "approximate" in row["method"]
    assert row["n_missing_excluded"] == 1 and row["ci_low"] < row["mean"] < row["ci_high"]


def test_total_tokens_is_derived_when_absent() -> None:
    df = episodes_frame({"a": {"t1": ["pass"], "t2": ["pass"]}})
    for bucket, values in {"input_tokens": [1, 2], "output_tokens": [3, 4]}.items():
        df[bucket] = values
    df["cache_read_tokens"] = df["cache_creation_tokens"] = 0
    assert summarize(df, "total_tokens", n_resamples=199).iloc[0]["mean"] == 5.0


def test_unknown_metric_or_column_lists_the_valid_names() -> None:
    df = episodes_frame(OUTCOMES)
    with pytest.raises(
        AnalysisError, match=r"unknown metric 'pased' \(did you mean 'passed'\?\); valid: .*passed"
    ):
        summarize(df, "pased")
    with pytest.raises(AnalysisError, match="variant"):
        summarize(df, by="varient")
