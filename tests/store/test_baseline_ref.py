"""Naming a baseline: a run folder, a run id in the store, latest-on-BRANCH; what names nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from coder_eval.errors import StoreError
from coder_eval.store import RunStore, index_runs
from coder_eval.store.baseline_ref import check_reference, compare_with_baseline, find_baseline
from tests.store.histories import grid, write_run


@pytest.fixture
def store(tmp_path: Path) -> Path:
    runs = tmp_path / "runs"
    write_run(runs, "main-1", grid({"a": "pass"}), day=0, hashes={"a": "sha256:old"})
    write_run(runs, "main-2", grid({"a": "pass"}), day=1)
    write_run(runs, "pr", grid({"a": "fail"}), day=2, branch="pr")
    path = tmp_path / "h.duckdb"
    with RunStore.open(path) as opened:
        index_runs(opened, [runs])
    return path


def test_latest_on_a_branch_is_its_newest_run_other_than_this_one(store: Path) -> None:
    assert find_baseline("latest-on-main", store).run_id == "main-2"  # type: ignore[union-attr]
    assert find_baseline("latest-on-main", store, exclude="main-2").run_id == "main-1"  # type: ignore[union-attr]
    assert find_baseline("latest-on-nowhere", store) is None
    assert find_baseline("latest-on-main", store.parent / "no.duckdb") is None


def test_a_run_id_reads_the_store_and_a_folder_reads_the_folder(store: Path) -> None:
    by_id = find_baseline("main-1", store)
    assert by_id is not None and by_id.hashes == {"a": "sha256:old"} and by_id.git_branch == "main"
    by_folder = find_baseline(str(store.parent / "runs" / "main-1"), store)
    assert by_folder is not None and by_folder.run_id == "main-1" and len(by_folder.runs.episodes) == 1


def test_a_reference_that_names_nothing_is_refused_before_the_run(store: Path) -> None:
    check_reference("main-1", store)
    check_reference("latest-on-anything", store)
    with pytest.raises(StoreError, match="no such run"):
        check_reference("main-9", store)
    with pytest.raises(StoreError, match="not a run folder"):
        check_reference(str(store.parent), store)


def test_compare_with_baseline_says_why_there_is_none(store: Path) -> None:
    regression, found, note = compare_with_baseline(store.parent / "runs" / "pr", "latest-on-dev", store)
    assert regression is None and found is None
    assert note is not None and "latest-on-dev names no completed run" in note
    regression, found, note = compare_with_baseline(store.parent / "runs" / "pr", "latest-on-main", store)
    assert regression is not None and regression.baseline_run == "main-2" and note is None


def test_a_budget_stopped_run_is_a_partial_baseline_and_an_interrupted_one_none(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    write_run(runs, "main-full", grid({"a": "pass", "b": "pass"}), day=0)
    write_run(runs, "main-budget", grid({"a": "pass"}), day=1, status="budget_stopped", not_reached=3)
    write_run(runs, "main-cut", grid({"a": "pass"}), day=2, status="interrupted")
    write_run(runs, "pr", grid({"a": "fail", "b": "pass"}), day=3, branch="pr")
    store = tmp_path / "h.duckdb"
    with RunStore.open(store) as opened:
        index_runs(opened, [runs])

    regression, found, note = compare_with_baseline(runs / "pr", "latest-on-main", store)
    assert found is not None and (found.run_id, found.status) == ("main-budget", "budget_stopped")
    assert regression is not None and regression.baseline_run == "main-budget"
    assert note == (
        "the baseline `main-budget` was stopped by its budget after 1 of 4 episodes: the comparison "
        "pairs the tasks both runs measured, and lists the rest as not paired"
    )
    by_folder = find_baseline(str(runs / "main-budget"), store)
    assert by_folder is not None and by_folder.partial_note() == note
    assert find_baseline("main-full", store).partial_note() is None  # type: ignore[union-attr]
