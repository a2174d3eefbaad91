"""Indexing run folders: every frame row kept, incremental, idempotent, rebuildable, bad folders named."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from coder_eval.analysis import load_runs
from coder_eval.store import RunStore, index_runs, load_store
from tests.store.histories import grid, write_run


def counts(store: RunStore) -> dict[str, int]:
    tables = ("runs", "episodes", "criteria", "tool_calls", "messages", "tasks")
    return {t: store.con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in tables}  # type: ignore[index]


def test_the_store_gives_back_the_frames_the_folder_gives(tmp_path: Path) -> None:
    folder = write_run(
        tmp_path / "runs", "r1", grid({"a": "pass", "b": "fail", "c": "invalid"}, ("x", "y"), 2)
    )
    with RunStore.open(tmp_path / "h.duckdb") as store:
        index_runs(store, [tmp_path / "runs"])
        stored = load_store(store)
    loaded = load_runs(folder)
    for name in ("episodes", "criteria", "tool_calls", "messages"):
        pd.testing.assert_frame_equal(getattr(stored, name), getattr(loaded, name))
    assert stored.run_dirs == (folder.resolve(),)


def test_indexing_twice_changes_nothing_and_a_changed_run_is_replaced_whole(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    write_run(runs, "r1", grid({"a": "pass", "b": "fail"}))
    with RunStore.open(tmp_path / "h.duckdb") as store:
        first = index_runs(store, [runs])
        before = counts(store)
        again = index_runs(store, [runs])
        assert (first.indexed, again.indexed, again.unchanged) == (["r1"], [], ["r1"])
        assert counts(store) == before
        episode = runs / "r1" / "episodes" / "b--default--r0.jsonl"
        episode.unlink()
        assert index_runs(store, [runs]).indexed == ["r1"]
        assert counts(store)["episodes"] == before["episodes"] - 1


def test_rebuild_starts_from_the_folders_alone(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    write_run(runs, "r1", grid({"a": "pass"}))
    write_run(runs, "r2", grid({"a": "fail"}), day=1)
    with RunStore.open(tmp_path / "h.duckdb") as store:
        index_runs(store, [runs])
        (runs / "r2").rename(tmp_path / "moved")
        report = index_runs(store, [runs], rebuild=True)
        assert report.indexed == ["r1"]
        assert counts(store)["runs"] == 1


def test_an_unreadable_run_is_named_and_the_others_indexed(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    write_run(runs, "good", grid({"a": "pass"}))
    (runs / "bad").mkdir()
    (runs / "bad" / "run.json").write_text("{not json")
    with RunStore.open(tmp_path / "h.duckdb") as store:
        report = index_runs(store, [runs])
    assert report.indexed == ["good"]
    assert len(report.problems) == 1 and "bad/run.json: not JSON" in report.problems[0]
    assert report.line() == "1 runs indexed, 0 unchanged, 1 unreadable"


def test_the_runs_row_keeps_the_provenance(tmp_path: Path) -> None:
    write_run(tmp_path / "runs", "r1", grid({"a": "pass", "b": "fail"}, ("x",)), hashes={"a": "sha256:1"})
    with RunStore.open(tmp_path / "h.duckdb") as store:
        index_runs(store, [tmp_path / "runs"])
        row = store.con.execute(
            "SELECT git_branch, git_commit, coder_eval_version, models, agents, pass_rate, n_valid FROM runs"
        ).fetchone()
        hashes = dict(store.con.execute("SELECT task_id, content_hash FROM tasks").fetchall())
    assert row == ("main", "c0000", "0.test", ["claude-x"], ["claude-code"], 0.5, 2)
    assert hashes == {"a": "sha256:1", "b": "sha256:b"}


@pytest.mark.parametrize("where", ["missing", "not_a_store"])
def test_a_store_that_is_not_one_is_refused_read_only(tmp_path: Path, where: str) -> None:
    from coder_eval.errors import StoreError

    path = tmp_path / "h.duckdb"
    if where == "not_a_store":
        path.write_text("hello")
    with pytest.raises(StoreError, match=r"h\.duckdb"):
        RunStore.open(path, read_only=True)


def test_many_runs_come_back_in_the_order_asked_as_from_their_folders(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    first = write_run(runs, "r1", grid({f"t{i}": "pass" for i in range(30)}, ("x", "y")))
    second = write_run(runs, "r2", grid({f"t{i}": "fail" for i in range(30)}, ("x", "y")), day=1)
    with RunStore.open(tmp_path / "h.duckdb") as store:
        index_runs(store, [runs])
        stored, oldest_first = load_store(store, ["r2", "r1"]), load_store(store)
    pd.testing.assert_frame_equal(stored.episodes, load_runs([second, first]).episodes)
    pd.testing.assert_frame_equal(oldest_first.criteria, load_runs([first, second]).criteria)


@pytest.mark.filterwarnings("ignore:1 trajectories are incomplete")
@pytest.mark.parametrize("fixture", ["skill-ab", "three-way"])
def test_a_recorded_run_comes_back_from_the_store_as_its_folder_gives_it(
    tmp_path: Path, fixture: str
) -> None:
    folder = Path(__file__).parent.parent / "fixtures" / "runs" / fixture
    with RunStore.open(tmp_path / "h.duckdb") as store:
        index_runs(store, [folder])
        stored = load_store(store)
        (cost,) = store.con.execute("SELECT cost_usd FROM runs").fetchone()  # type: ignore[misc]
    loaded = load_runs(folder)
    assert len(loaded.messages) and len(loaded.tool_calls)  # every table has rows to compare
    for name in ("episodes", "criteria", "tool_calls", "messages"):
        pd.testing.assert_frame_equal(getattr(stored, name), getattr(loaded, name))
    assert cost == pytest.approx(loaded.episodes.cost_usd.sum())


def test_a_lone_surrogate_an_agent_sent_is_stored_as_the_replacement_character(tmp_path: Path) -> None:
    """JSON may escape half of a surrogate pair (``"\\ud83d"``), which no character is: the store keeps
    the rest of the text, and the run is indexed, not taken for a damaged store."""
    folder = write_run(tmp_path / "runs", "r1", grid({"a": "pass", "b": "fail"}))
    path = sorted((folder / "episodes").glob("*.jsonl"))[0]
    events = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    message = next(e for e in events if e["type"] == "message")
    message["content"] = [{"type": "text", "text": "half \ud83d of 😀, then \x00 and é"}]
    path.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")

    with RunStore.open(tmp_path / "h.duckdb") as store:
        report = index_runs(store, [tmp_path / "runs"])
        texts = [t for (t,) in store.con.execute("SELECT text FROM messages").fetchall()]

    assert report.indexed == ["r1"] and not report.problems, report
    assert "half \ufffd of 😀, then \x00 and é" in texts
