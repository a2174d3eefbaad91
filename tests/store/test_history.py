"""Listing runs by filters, newest first, and loading chosen runs' frames."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from coder_eval.store import RunFilter, RunStore, index_runs, list_runs, load_store
from tests.store.histories import grid, write_run


@pytest.fixture
def store(tmp_path: Path) -> RunStore:
    runs = tmp_path / "runs"
    write_run(runs, "old-main", grid({"a": "pass", "b": "fail"}), day=0)
    write_run(runs, "new-main", grid({"a": "pass", "c": "pass"}), day=2, model="claude-y")
    write_run(runs, "feature", grid({"a": "fail"}), day=3, branch="feature", tags=("docs",))
    opened = RunStore.open(tmp_path / "h.duckdb")
    index_runs(opened, [runs])
    return opened


@pytest.mark.parametrize(
    ("chosen", "expected"),
    [
        (RunFilter(), ["feature", "new-main", "old-main"]),
        (RunFilter(branch="main"), ["new-main", "old-main"]),
        (RunFilter(task="b"), ["old-main"]),
        (RunFilter(model="claude-y"), ["new-main"]),
        (RunFilter(tag="docs"), ["feature"]),
        (RunFilter(agent="claude-code", since=datetime(2026, 11, 2, tzinfo=UTC)), ["feature", "new-main"]),
        (RunFilter(until=datetime(2026, 11, 2, tzinfo=UTC)), ["old-main"]),
        (RunFilter(suite="nowhere"), []),
    ],
)
def test_filters_narrow_the_list(store: RunStore, chosen: RunFilter, expected: list[str]) -> None:
    assert list_runs(store, chosen)["run_id"].tolist() == expected


def test_the_listing_carries_the_headline_figures(store: RunStore) -> None:
    row = list_runs(store, RunFilter(task="b")).iloc[0]
    assert (row.n_episodes, row.n_valid, row.pass_rate, row.git_branch) == (2, 2, 0.5, "main")


def test_chosen_runs_load_alone(store: RunStore) -> None:
    runs = load_store(store, ["old-main", "feature"])
    assert sorted(runs.episodes["run_id"].unique()) == ["feature", "old-main"]
    assert set(runs.criteria["run_id"]) == {"feature", "old-main"}
    assert len(load_store(store, []).episodes) == 0
