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
