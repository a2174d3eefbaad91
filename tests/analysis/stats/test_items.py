"""Flaky and non-discriminating tasks found in a planted history; item analysis; a smaller suite."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from coder_eval.analysis import load_runs
from coder_eval.analysis.stats.items import (
    HeldOut,
    constant_tasks,
    detectable,
    flaky_tasks,
    held_out,
    item_analysis,
    smaller_suite,
    steady_tasks,
)
from tests.store.histories import write_run

REPEATS = 4


def planted(run: int) -> dict[tuple[str, str, int], str]:
    """Two variants; 'flaky' passes every repeat in runs 0-1 and fails every one in runs 2-3;
    'steady' passes half its repeats in every run; 'easy' and 'hard' never change."""
    outcomes = {}
    for variant in ("a", "b"):
        for r in range(REPEATS):
            outcomes[("flaky", variant, r)] = "pass" if run < 2 else "fail"
            outcomes[("steady", variant, r)] = "pass" if r % 2 else "fail"
            outcomes[("easy", variant, r)] = "pass"
            outcomes[("hard", variant, r)] = "fail"
    return outcomes


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> pd.DataFrame:
    root = tmp_path_factory.mktemp("history") / "runs"
    return load_runs([write_run(root, f"run{i}", planted(i), day=i) for i in range(4)]).episodes


def test_a_task_whose_runs_disagree_beyond_chance_is_flaky_and_a_noisy_one_is_not(
    history: pd.DataFrame,
) -> None:
    found = flaky_tasks(history).set_index(["task_id", "config"])
    flaky = found.loc[("flaky", "sha256:a/flaky")]
    assert flaky["flaky"] and flaky["p_holm"] < 0.01 and flaky["rates"] == "4/4, 4/4, 0/4, 0/4"
    assert flaky["n_runs"] == 4 and flaky["n_episodes"] == 16
    steady = found.loc[("steady", "sha256:a/steady")]
    assert not steady["flaky"] and steady["p_value"] == 1.0 and steady["statistic"] == 0.0
    assert set(found[found["flaky"]].index.get_level_values(0)) == {"flaky"}


def test_tasks_every_configuration_always_passes_or_fails_are_named(history: pd.DataFrame) -> None:
    found = constant_tasks(history).set_index("task_id")
    assert found["outcome"].to_dict() == {"easy": "always passes", "hard": "always fails"}
    assert found.loc["easy", "evidence"] == "32 episodes, 2 configurations, 4 runs"


def test_one_configuration_alone_is_never_called_constant_or_tested(tmp_path: Path) -> None:
    episodes = load_runs(write_run(tmp_path / "runs", "one", {("t", "a", 0): "pass"})).episodes
    assert constant_tasks(episodes).empty
    assert flaky_tasks(episodes).empty


def test_item_analysis_gives_difficulty_and_discrimination(history: pd.DataFrame) -> None:
    items = item_analysis(history).set_index("task_id")
    assert items.loc["easy", "difficulty"] == 0.0 and items.loc["hard", "difficulty"] == 1.0
    assert items.loc["flaky", "pass_rate"] == 0.5 and items.loc["flaky", "n_configs"] == 8
    assert pd.isna(items.loc["easy", "discrimination"])  # no spread: no correlation


def test_a_smaller_suite_of_discriminating_tasks_is_sized_by_the_power_model(tmp_path: Path) -> None:
    outcomes = {}
    for i in range(12):
        for r in range(3):
            outcomes[(f"d{i}", "old", r)] = "fail" if (i + r) % 3 else "pass"
            outcomes[(f"d{i}", "new", r)] = "pass" if (i + r) % 3 else "fail"
            outcomes[(f"c{i}", "old", r)] = outcomes[(f"c{i}", "new", r)] = "pass"
    episodes = load_runs(write_run(tmp_path / "runs", "ab", outcomes)).episodes
    size = smaller_suite(episodes, "new", "old", keep=[f"d{i}" for i in range(12)])
    assert size.n_tasks == 24 and size.n_kept == 12
    assert size.kept_effect > size.effect > 0 and 0.05 < size.power <= 1
    assert size.required is not None and size.required < 24


def test_the_statistic_is_pearsons_chi_square_and_a_run_of_one_episode_is_tested() -> None:
    import numpy as np
    from scipy import stats

    from coder_eval.analysis.stats.items import chi_square, homogeneity

    passed, runs = np.array([1, 1, 1, 0, 0, 1, 0, 0, 1, 0.0]), np.array([0, 0, 0, 1, 1, 1, 2, 2, 2, 2])
    table = np.array([[3, 0], [1, 2], [1, 3]])
    assert float(chi_square(passed, runs)) == pytest.approx(
        stats.chi2_contingency(table, correction=False).statistic
    )
    statistic, p = homogeneity([np.ones(4), np.ones(4), np.zeros(4), np.zeros(1)])
    assert statistic == pytest.approx(13.0) and p < 0.01


def mildly_flaky(run: int) -> dict[tuple[str, str, int], str]:
    """Six runs of three repeats: tasks m0-m4 each fail every repeat in one run of their own; s0-s14
    always pass."""
    outcomes = {}
    for r in range(3):
        for i in range(5):
            outcomes[(f"m{i}", "a", r)] = "fail" if run == i else "pass"
        for i in range(15):
            outcomes[(f"s{i}", "a", r)] = "pass"
    return outcomes


def test_the_fdr_list_names_what_the_family_wise_list_misses(tmp_path: Path) -> None:
    root = tmp_path / "runs"
    episodes = load_runs([write_run(root, f"run{i}", mildly_flaky(i), day=i) for i in range(6)]).episodes
    found = flaky_tasks(episodes).set_index("task_id")
    mild = [f"m{i}" for i in range(5)]
    assert not found["flaky"].any()  # Holm over 20 tests: 0.008 x 20
    assert found.loc[mild, "flaky_fdr"].all() and not found.drop(index=mild)["flaky_fdr"].any()


def test_what_the_flaky_test_can_see_at_this_many_runs() -> None:
    assert detectable(10, 3, 40).failing_runs == 2
    assert detectable(10, 1, 40).failing_runs is None  # one run each: no task can be named


def test_the_item_table_says_why_a_discrimination_is_missing(history: pd.DataFrame) -> None:
    items = item_analysis(history).set_index("task_id")
    assert items.loc["easy", "note"] == "no spread: every configuration had the same pass rate on it"
    two = item_analysis(history[history["run_id"] == "run0"]).set_index("task_id")
    assert two["discrimination"].isna().all() and two["pass_rate"].notna().all()
    assert set(two["note"]) == {"needs 3 configurations that ran it and another task (2 did)"}


def test_the_item_table_reads_outcomes_when_passed_is_missing(history: pd.DataFrame) -> None:
    unread = history.assign(passed=pd.array([None] * len(history), dtype="boolean"))
    assert item_analysis(unread)["pass_rate"].tolist() == item_analysis(history)["pass_rate"].tolist()


def test_the_smaller_suite_is_chosen_on_runs_that_do_not_size_it(tmp_path: Path) -> None:
    """Task z always passes in the older runs and discriminates in the newest: chosen on the older
    runs it is left out, so the newest run's difference on it cannot flatter the size."""
    root = tmp_path / "runs"
    runs = []
    for run in range(3):
        outcomes = {}
        for r in range(2):
            for i in range(6):
                outcomes[(f"d{i}", "old", r)], outcomes[(f"d{i}", "new", r)] = (
                    ("fail", "pass") if (i + r) % 2 else ("pass", "pass")
                )
            outcomes[("z", "old", r)] = "fail" if run == 2 else "pass"
            outcomes[("z", "new", r)] = "pass"
        runs.append(write_run(root, f"run{run}", outcomes, day=run))
    split = held_out(load_runs(runs).episodes)
    assert isinstance(split, HeldOut) and split.run_id == "run2"
    assert split.how == "sized on run run2; tasks chosen on the 2 other runs"
    assert set(split.size["run_id"]) == {"run2"} and "run2" not in set(split.choose["run_id"])
    assert "z" not in steady_tasks(split.choose) and "d1" in steady_tasks(split.choose)


def test_one_run_is_split_by_repeat_and_one_repeat_cannot_be(tmp_path: Path) -> None:
    both = load_runs(write_run(tmp_path / "runs", "r", planted(0))).episodes
    split = held_out(both)
    assert (
        isinstance(split, HeldOut)
        and set(split.choose["repeat"]) == {0, 2}
        and set(split.size["repeat"]) == {1, 3}
    )
    single = load_runs(
        write_run(tmp_path / "one", "s", {("t", "a", 0): "pass", ("t", "b", 0): "fail"})
    ).episodes
    assert (
        held_out(single)
        == "run s alone, one repeat: no data left to size a suite on that did not choose its tasks"
    )
