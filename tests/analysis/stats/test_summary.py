import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.proportion import proportion_confint

from coder_eval.analysis import suite_rollups, summarize, wilson_interval
from coder_eval.analysis.stats.estimate import effective_count
from coder_eval.analysis.stats.summary import folder_names
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


def suite_frame() -> pd.DataFrame:
    """Four tasks in two folders of one suite (one nested), each run twice in two variants."""
    outcomes = {
        "a": {
            "t1": ["pass", "pass"],
            "t2": ["fail", "invalid"],
            "t3": ["pass", "fail"],
            "t4": ["pass", "pass"],
        },
        "b": {
            "t1": ["fail", "fail"],
            "t2": ["pass", "pass"],
            "t3": ["invalid", "invalid"],
            "t4": ["pass", "fail"],
        },
    }
    df = episodes_frame(outcomes)
    folder = {"t1": "/s/tasks/core", "t2": "/s/tasks/core", "t3": "/s/tasks/extra/deep", "t4": None}
    tags = {"t1": ["unit", "fast"], "t2": ["unit"], "t3": [], "t4": ["fast"]}
    return df.assign(
        episode_id=df.path,
        task_folder=df.task_id.map(folder),
        tags=df.task_id.map(tags),
        cost_usd=[0.5, np.nan, 1.0, 2.0, 0.25, 0.25, 1.0, 1.0] * 2,
        total_tokens=1000.0,
    )


def test_suite_rollups_count_rate_and_cost_per_folder_and_variant() -> None:
    df = suite_frame()

    table = suite_rollups(df).set_index(["suite", "variant_id"])

    assert sorted(table.index) == [(s, v) for s in ("(unknown)", "core", "extra/deep") for v in "ab"]
    core = table.loc[("core", "a")]
    assert (core.n_tasks, core.n_episodes, core.n_pass, core.n_fail, core.n_invalid) == (2, 4, 2, 1, 1)
    assert (core.cost_usd, core.n_cost_unknown, core.total_tokens) == (
        3.5,
        1,
        4000.0,
    )  # invalid ones cost too
    part = df[(df.task_folder == "/s/tasks/core") & (df.variant_id == "a")]
    rate = summarize(part).iloc[0]
    assert (core.pass_rate, core.pass_rate_low, core.pass_rate_high, core.pass_rate_method) == (
        rate["mean"], rate.ci_low, rate.ci_high, rate.method,
    )  # fmt: skip
    cost = summarize(part, "cost_usd").iloc[0]
    assert (core.cost_usd_mean, core.cost_usd_method) == (cost["mean"], cost.method)
    assert table.loc[("extra/deep", "b")].n_invalid == 2 and np.isnan(
        table.loc[("extra/deep", "b")].pass_rate
    )
    assert set(table.suite_by) == {"folder"}


def test_a_suite_of_every_task_reads_as_the_whole_run() -> None:
    df = suite_frame().assign(task_folder="/s/tasks")

    table = suite_rollups(df).set_index("variant_id")
    whole = summarize(df).set_index("variant_id")

    assert set(table.suite) == {"tasks"}  # one folder: its own name
    for variant in "ab":
        assert table.loc[variant, ["pass_rate", "pass_rate_low", "pass_rate_high"]].tolist() == (
            whole.loc[variant, ["mean", "ci_low", "ci_high"]].tolist()
        )


def test_suite_rollups_by_tag_count_an_episode_in_each_of_its_tags() -> None:
    table = suite_rollups(suite_frame(), by="tag").set_index(["suite", "variant_id"])

    assert sorted({s for s, _ in table.index}) == ["(untagged)", "fast", "unit"]
    assert table.loc[("fast", "a")].n_episodes == 4 and table.loc[("unit", "a")].n_episodes == 4
    assert table.loc[("(untagged)", "b")].n_invalid == 2


def test_folder_names_are_relative_to_the_folder_they_share() -> None:
    assert folder_names(["/s/tasks/a", "/s/tasks/b/c"]) == {"/s/tasks/a": "a", "/s/tasks/b/c": "b/c"}
    assert folder_names(["/s/tasks", "/s/tasks/b"]) == {"/s/tasks": "tasks", "/s/tasks/b": "b"}
    assert folder_names(["/s/only"]) == {"/s/only": "only"} and folder_names([]) == {}


def test_suite_rollups_refuse_another_grouping_and_take_frames_without_folders() -> None:
    with pytest.raises(AnalysisError, match="'folder' or 'tag'"):
        suite_rollups(suite_frame(), by="task")  # type: ignore[arg-type]
    old = suite_frame().drop(columns="task_folder")
    assert set(suite_rollups(old).suite) == {"(unknown)"}
    assert suite_rollups(old.iloc[:0]).empty
