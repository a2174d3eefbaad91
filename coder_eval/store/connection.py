"""``RunStore``: one DuckDB file holding the history of many runs (``coder_eval.store.schema``).

The default file is ``runs/history.duckdb``; ``CODER_EVAL_STORE`` names another. Every failure of
the store is one ``StoreError`` naming the file and what to do: a store written by another schema
version, a damaged one (cut short, a garbled ``schema_version``) and a file that is not coder_eval's
(another program's DuckDB file, or no DuckDB file at all) are refused, and the last is never written
to; ``rebuild`` moves such a file aside and starts an empty store. A store another process holds is
waited for (``CODER_EVAL_STORE_WAIT`` seconds, default ``WAIT_S``), then ``StoreBusy``.

Example::

    with RunStore.open(Path("runs/history.duckdb")) as store:
        store.con.sql("SELECT run_id, pass_rate FROM runs").df()
    store, moved = RunStore.rebuild(Path("runs/history.duckdb"))   # moved: where a bad file went
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import NamedTuple

import duckdb

from coder_eval.errors import StoreBusy, StoreError
from coder_eval.store.schema import STORE_SCHEMA_VERSION, create_tables, drop_tables, stored_version

DEFAULT_STORE = Path("runs/history.duckdb")
STORE_VARIABLE = "CODER_EVAL_STORE"
WAIT_VARIABLE = "CODER_EVAL_STORE_WAIT"
WAIT_S = 30.0
"""How long opening the store waits for another process that holds it (indexing, say)."""
DUCKDB_MAGIC = b"DUCK"
"""Bytes 8-11 of every DuckDB database file."""
REBUILD = (
    "coder-eval history --index runs --rebuild moves it aside and rebuilds the store from the run folders"
)


def default_store() -> Path:
    """``$CODER_EVAL_STORE``, else ``runs/history.duckdb``."""
    return Path(os.environ.get(STORE_VARIABLE) or DEFAULT_STORE)


def store_for(run_folder: Path, store: Path | None = None) -> Path:
    """The store a finished run is indexed into: ``store``, else ``$CODER_EVAL_STORE``, else
    ``history.duckdb`` beside the run folder (``runs/history.duckdb`` for ``runs/<run_id>``)."""
    return store or Path(os.environ.get(STORE_VARIABLE) or run_folder.parent / DEFAULT_STORE.name)


def wait_s() -> float:
    """``$CODER_EVAL_STORE_WAIT`` seconds (a number of at least 0), else ``WAIT_S``."""
    given = os.environ.get(WAIT_VARIABLE)
    try:
        return max(float(given), 0.0) if given else WAIT_S
    except ValueError as exc:
        raise StoreError(f"{WAIT_VARIABLE}={given!r}: not a number of seconds") from exc


class Rebuilt(NamedTuple):
    """An empty store made by ``RunStore.rebuild``, and where the file it replaced was moved (None:
    it was coder_eval's store, emptied in place, or there was none)."""

    store: RunStore
    moved_to: Path | None


class RunStore:
    """An open store (its connection in ``con``); close it, or use it as a context manager (a DuckDB
    error inside the block leaves it as a ``StoreError`` naming the file)."""

    def __init__(self, path: Path, con: duckdb.DuckDBPyConnection) -> None:
        self.path, self.con = path, con

    @classmethod
    def open(cls, path: Path | None = None, *, read_only: bool = False) -> RunStore:
        """Open (``read_only``: an existing store only) or create the store at ``path``."""
        path = path or default_store()
        if read_only and not path.is_file():
            raise StoreError(f"{path}: no run store here; index runs first: coder-eval history --index runs")
        refuse_not_duckdb(path)
        con = connect(path, read_only)
        try:
            check_schema(con, path, read_only)
        except BaseException:
            con.close()
            raise
        return cls(path, con)

    @classmethod
    def rebuild(cls, path: Path | None = None) -> Rebuilt:
        """An empty store at ``path``: coder_eval's store (of any schema version) is emptied; a file
        that is not one (damaged, another program's, not DuckDB) is moved aside first, never written
        to. A store another process holds stays ``StoreBusy``; a full disk stays a ``StoreError``."""
        path = path or default_store()
        try:
            store = cls.open(path)
            try:
                store.reset()
            except BaseException:
                store.close()
                raise
        except OlderSchema:
            return Rebuilt(cls.emptied(path), None)
        except NotAStore:
            moved = move_aside(path)
            return Rebuilt(cls.open(path), moved)
        return Rebuilt(store, None)

    @classmethod
    def emptied(cls, path: Path) -> RunStore:
        """coder_eval's own store of another schema version, every table dropped and made again."""
        con = connect(path, read_only=False)
        try:
            with guarded(path, "empty"):
                drop_tables(con)
                create_tables(con)
        except BaseException:
            con.close()
            raise
        return cls(path, con)

    def reset(self) -> None:
        """Empty the store (every table dropped and made again)."""
        with guarded(self.path, "empty"):
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
        if isinstance(exc, duckdb.Error):
            raise damaged(self.path, "read or write", exc) from exc


class OlderSchema(StoreError):
    """coder_eval's own store, written by another schema version (``rebuild`` empties it)."""


class NotAStore(StoreError):
    """A file that is not a usable coder_eval store: damaged, another program's, not DuckDB
    (``rebuild`` moves it aside)."""


def refuse_not_duckdb(path: Path) -> None:
    """``StoreError`` when ``path`` holds something other than a DuckDB database (an empty file is a
    new store): it is never opened, so never written to."""
    try:
        with path.open("rb") as handle:
            head = handle.read(12)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise StoreError(f"{path}: cannot read the run store: {exc.strerror or exc}") from exc
    if head and head[8:12] != DUCKDB_MAGIC:
        raise NotAStore(
            f"{path}: not a DuckDB file, so not a coder_eval run store; it was left as it is: name "
            f"another store (--store, ${STORE_VARIABLE}), or {REBUILD}"
        )


def connect(path: Path, read_only: bool) -> duckdb.DuckDBPyConnection:
    """A connection to ``path``, waiting up to ``wait_s()`` while another process holds it."""
    deadline = time.monotonic() + wait_s()
    while True:
        try:
            if not read_only:
                path.parent.mkdir(parents=True, exist_ok=True)
            return duckdb.connect(str(path), read_only=read_only)
        except duckdb.Error as exc:
            if not is_busy(exc):
                raise damaged(path, "open", exc) from exc
            if time.monotonic() >= deadline:
                raise StoreBusy(
                    f"{path}: the run store is busy: another process holds it ({holder(exc)}); "
                    f"waited {wait_s():g} s (${WAIT_VARIABLE})"
                ) from exc
            time.sleep(0.2)
        except OSError as exc:
            raise StoreError(f"{path}: cannot open the run store: {exc.strerror or exc}") from exc


def check_schema(con: duckdb.DuckDBPyConnection, path: Path, read_only: bool) -> None:
    """The store's schema version is this coder_eval's (a new, empty file gets the tables when
    writable); anything else is refused without a write."""
    with guarded(path, "read"):
        version = stored_version(con)
        tables = table_names(con)
    if version is None and "store_meta" in tables:
        raise NotAStore(f"{path}: a damaged run store (no schema_version recorded); {REBUILD}")
    if version is None and tables:
        raise NotAStore(
            f"{path}: another program's DuckDB file (tables {', '.join(sorted(tables)[:5])}), not a "
            f"coder_eval run store; it was left as it is: name another store (--store, ${STORE_VARIABLE}), "
            f"or {REBUILD}"
        )
    if version is not None and version != str(STORE_SCHEMA_VERSION):
        if not version.isdigit():
            raise NotAStore(f"{path}: a damaged run store (its schema_version is {version!r}); {REBUILD}")
        raise OlderSchema(
            f"{path}: a run store of schema {version} (this coder_eval writes {STORE_SCHEMA_VERSION}); "
            "rebuild it from the run folders: coder-eval history --index runs --rebuild"
        )
    if version is None and read_only:
        raise StoreError(f"{path}: an empty DuckDB file, not yet a run store; index runs into it first")
    if not read_only:
        with guarded(path, "write"):
            create_tables(con)


def older_schema(path: Path) -> bool:
    """``path`` opens as coder_eval's own store of another (numbered) schema version."""
    try:
        con = connect(path, read_only=True)
    except StoreError:
        return False
    try:
        version = stored_version(con)
        return version is not None and version.isdigit() and version != str(STORE_SCHEMA_VERSION)
    except duckdb.Error:
        return False
    finally:
        con.close()


def table_names(con: duckdb.DuckDBPyConnection) -> set[str]:
    return {row[0] for row in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}


def move_aside(path: Path) -> Path:
    """Move ``path`` (and its write-ahead log) to ``<name>.aside-<UTC time>`` beside it."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    target = path.with_name(f"{path.name}.aside-{stamp}")
    try:
        path.rename(target)
        wal = path.with_name(f"{path.name}.wal")
        if wal.exists():
            wal.rename(target.with_name(f"{target.name}.wal"))
    except OSError as exc:
        raise StoreError(f"{path}: cannot move it aside to rebuild the store: {exc.strerror or exc}") from exc
    return target


@contextlib.contextmanager
def guarded(path: Path, doing: str) -> Iterator[None]:
    """A block of store work whose DuckDB errors leave it as one ``StoreError`` naming the file."""
    try:
        yield
    except duckdb.Error as exc:
        raise damaged(path, doing, exc) from exc


def damaged(path: Path, doing: str, exc: duckdb.Error) -> StoreError:
    """The error of a DuckDB failure: a full disk says so; anything else may be a damaged file."""
    first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    if any(word in first for word in ("No space left", "File too large", "Read-only file system")):
        return StoreError(f"{path}: cannot {doing} the run store: {first}")
    return NotAStore(f"{path}: cannot {doing} the run store ({first}); if it is damaged, {REBUILD}")


def is_busy(exc: duckdb.Error) -> bool:
    return "Conflicting lock" in str(exc) or "Could not set lock" in str(exc)


def holder(exc: duckdb.Error) -> str:
    """``PID 1234``, from DuckDB's message, when it names the holder."""
    text = str(exc)
    at = text.find("(PID ")
    return text[at + 1 : text.find(")", at)] if at >= 0 else "its lock is held"
