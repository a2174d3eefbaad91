"""Opening the store: where it is, and a store of another schema refused with what to do."""

from __future__ import annotations

from pathlib import Path

import pytest

from coder_eval.errors import StoreError
from coder_eval.store import RunStore
from coder_eval.store.connection import store_for


def test_a_finished_run_is_indexed_beside_its_folder_unless_told(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CODER_EVAL_STORE", raising=False)
    assert store_for(tmp_path / "runs" / "r1") == tmp_path / "runs" / "history.duckdb"
    monkeypatch.setenv("CODER_EVAL_STORE", str(tmp_path / "elsewhere.duckdb"))
    assert store_for(tmp_path / "runs" / "r1") == tmp_path / "elsewhere.duckdb"
    assert store_for(tmp_path / "runs" / "r1", tmp_path / "given.duckdb") == tmp_path / "given.duckdb"


def test_a_store_of_another_schema_is_refused_with_how_to_rebuild(tmp_path: Path) -> None:
    path = tmp_path / "h.duckdb"
    with RunStore.open(path) as store:
        store.con.execute("UPDATE store_meta SET value = '99' WHERE key = 'schema_version'")
    with pytest.raises(StoreError, match=r"schema 99.*--rebuild"):
        RunStore.open(path)


def test_reset_empties_every_table(tmp_path: Path) -> None:
    with RunStore.open(tmp_path / "h.duckdb") as store:
        store.con.execute("INSERT INTO tasks VALUES ('r', 't', 'h')")
        store.reset()
        assert store.con.execute("SELECT count(*) FROM tasks").fetchone() == (0,)


def good_store(path: Path) -> Path:
    """A store with a run indexed, checkpointed into its file (no write-ahead log left)."""
    from coder_eval.store import index_runs
    from tests.store.histories import grid, write_run

    write_run(path.parent / "runs", "r1", grid({"a": "pass", "b": "fail"}))
    with RunStore.open(path) as store:
        index_runs(store, [path.parent / "runs"])
    return path


def spoil(path: Path, how: str) -> None:
    """Damage a store the ways they are found: cut short by a copy that stopped, a garbled
    schema_version, another program's DuckDB file, not DuckDB at all."""
    import duckdb

    if how == "cut":
        data = path.read_bytes()
        path.write_bytes(data[: len(data) // 5])
    elif how == "garbled":
        with duckdb.connect(str(path)) as con:
            con.execute("UPDATE store_meta SET value = 'v1?' WHERE key = 'schema_version'")
    elif how == "foreign":
        path.unlink()
        with duckdb.connect(str(path)) as con:
            con.execute("CREATE TABLE sales (region VARCHAR, amount DOUBLE)")
    else:
        path.write_text("region,amount\nnorth,12\n")


@pytest.mark.parametrize("how", ["cut", "garbled", "foreign", "text"])
def test_a_store_that_is_damaged_or_not_ours_is_one_store_error_and_never_written(
    tmp_path: Path, how: str
) -> None:
    path = good_store(tmp_path / "h.duckdb")
    spoil(path, how)
    before = path.read_bytes()
    for read_only in (True, False):
        with (
            pytest.raises(StoreError, match=r"h\.duckdb: .*--rebuild"),
            RunStore.open(path, read_only=read_only) as store,
        ):
            store.con.execute("SELECT count(*) FROM episodes").fetchall()
    assert path.read_bytes() == before


@pytest.mark.parametrize("how", ["cut", "garbled", "foreign", "text"])
def test_rebuild_moves_a_bad_file_aside_and_starts_again(tmp_path: Path, how: str) -> None:
    path = good_store(tmp_path / "h.duckdb")
    spoil(path, how)
    before = path.read_bytes()
    store, moved = RunStore.rebuild(path)
    with store:
        assert store.con.execute("SELECT count(*) FROM runs").fetchone() == (0,)
    assert moved is not None and moved.parent == tmp_path and moved.name.startswith("h.duckdb.aside-")
    assert moved.read_bytes() == before


def test_rebuild_empties_an_older_schema_store_in_place(tmp_path: Path) -> None:
    path = good_store(tmp_path / "h.duckdb")
    with RunStore.open(path) as store:
        store.con.execute("UPDATE store_meta SET value = '0' WHERE key = 'schema_version'")
    store, moved = RunStore.rebuild(path)
    with store:
        assert store.con.execute("SELECT count(*) FROM runs").fetchone() == (0,)
    assert moved is None and sorted(p.name for p in tmp_path.iterdir()) == ["h.duckdb", "runs"]


def test_a_store_another_process_holds_is_waited_for_then_busy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import subprocess
    import sys
    import time

    from coder_eval.errors import StoreBusy

    path = good_store(tmp_path / "h.duckdb")
    hold = (
        "import duckdb, sys, time; c = duckdb.connect(sys.argv[1]); print('held', flush=True); time.sleep(60)"
    )
    holder = subprocess.Popen([sys.executable, "-c", hold, str(path)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        monkeypatch.setenv("CODER_EVAL_STORE_WAIT", "1")
        started = time.monotonic()
        with pytest.raises(
            StoreBusy, match=rf"busy: another process holds it \(PID {holder.pid}\); waited 1 s"
        ):
            RunStore.open(path, read_only=True)
        assert time.monotonic() - started >= 1
    finally:
        holder.kill()
        holder.wait()
    with RunStore.open(path, read_only=True) as store:
        assert store.con.execute("SELECT count(*) FROM runs").fetchone() == (1,)
