"""``RunStore``: one DuckDB file holding the history of many runs (``coder_eval.store.schema``).

The default file is ``runs/history.duckdb``; ``CODER_EVAL_STORE`` names another. A store written by
another schema version is refused with what to do (rebuild it from the run folders, which stay the
source of truth).

Example::

    with RunStore.open(Path("runs/history.duckdb")) as store:
        store.con.sql("SELECT run_id, pass_rate FROM runs").df()
"""

from __future__ import annotations

import os
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

from coder_eval.errors import StoreError

if TYPE_CHECKING:
    import duckdb

DEFAULT_STORE = Path("runs/history.duckdb")
STORE_VARIABLE = "CODER_EVAL_STORE"


def default_store() -> Path:
    """``$CODER_EVAL_STORE``, else ``runs/history.duckdb``."""
    return Path(os.environ.get(STORE_VARIABLE) or DEFAULT_STORE)


def store_for(run_folder: Path, store: Path | None = None) -> Path:
    """The store a finished run is indexed into: ``store``, else ``$CODER_EVAL_STORE``, else
    ``history.duckdb`` beside the run folder (``runs/history.duckdb`` for ``runs/<run_id>``)."""
    return store or Path(os.environ.get(STORE_VARIABLE) or run_folder.parent / DEFAULT_STORE.name)


class RunStore:
    """An open store (its connection in ``con``); close it, or use it as a context manager."""

    def __init__(self, path: Path, con: duckdb.DuckDBPyConnection) -> None:
        self.path, self.con = path, con

    @classmethod
    def open(cls, path: Path | None = None, *, read_only: bool = False) -> RunStore:
        """Open (``read_only``: an existing store only) or create the store at ``path``."""
        import duckdb

        from coder_eval.store.schema import STORE_SCHEMA_VERSION, create_tables, stored_version

        path = path or default_store()
        if read_only and not path.is_file():
            raise StoreError(f"{path}: no run store here; index runs first: coder-eval history --index runs")
        try:
            if not read_only:
                path.parent.mkdir(parents=True, exist_ok=True)
            con = duckdb.connect(str(path), read_only=read_only)
        except (duckdb.Error, OSError) as exc:
            raise StoreError(f"{path}: cannot open the run store: {exc}") from exc
        store = cls(path, con)
        version = stored_version(con)
        if version not in (None, STORE_SCHEMA_VERSION):
            con.close()
            raise StoreError(
                f"{path}: a run store of schema {version} (this coder_eval writes {STORE_SCHEMA_VERSION}); "
                "rebuild it from the run folders: coder-eval history --index runs --rebuild"
            )
        if not read_only:
            create_tables(con)
        elif version is None:
            con.close()
            raise StoreError(f"{path}: not a coder_eval run store")
        return store

    def reset(self) -> None:
        """Empty the store (every table dropped and made again)."""
        from coder_eval.store.schema import create_tables, drop_tables

        drop_tables(self.con)
        create_tables(self.con)

    def close(self) -> None:
        self.con.close()

    def __enter__(self) -> RunStore:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
