"""Indexing run folders into the store: incremental (a run whose files have not changed since it was
indexed is skipped), idempotent (a run's rows are replaced whole, in one transaction) and rebuildable
(the run folders stay the source of truth; ``rebuild=True`` starts from an empty store).

Rows are read from the trajectories as the analysis frames read them (``frames.rows``) and written
with the frames' declared types, without building the frames: a run's end indexes it without
importing pandas.

Example::

    with RunStore.open(Path("runs/history.duckdb")) as store:
        report = index_runs(store, [Path("runs")])    # every run folder under runs/, or run folders
    report.indexed, report.unchanged, report.problems
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import tempfile
import warnings
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb

from coder_eval.analysis.frames.columns import EPISODES, Column
from coder_eval.analysis.frames.rows import ParsedEpisode, Row, drop_duplicates, parse_trajectory
from coder_eval.errors import CoderEvalError, StoreError
from coder_eval.manifest import MANIFEST, RunManifest, read_manifest
from coder_eval.run_dir import EPISODES as EPISODES_DIR
from coder_eval.store.connection import guarded
from coder_eval.store.schema import FRAMES, JSON_COLUMNS, RUN_TABLES, sql_type
from coder_eval.untrusted_json import replace_surrogates

if TYPE_CHECKING:
    from coder_eval.store.connection import RunStore


@dataclass
class IndexReport:
    """What an indexing pass did: run ids indexed (new or changed), unchanged (skipped), and the
    folders it could not read, each with why."""

    indexed: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def line(self) -> str:
        """``'2 runs indexed, 1 unchanged, 0 unreadable'``"""
        return (
            f"{len(self.indexed)} runs indexed, {len(self.unchanged)} unchanged, "
            f"{len(self.problems)} unreadable"
        )


def run_folders(paths: Iterable[Path]) -> Iterator[Path]:
    """Run folders named by ``paths``: a folder with run.json itself, else the run folders below it
    (``runs/latest``, a link, is skipped: its run is found under its own name)."""
    for path in paths:
        if (path / MANIFEST).is_file():
            yield path.resolve()
            continue
        for child in sorted(path.glob(f"**/{MANIFEST}")):
            if not child.parent.is_symlink():
                yield child.parent.resolve()


def fingerprint(folder: Path) -> str:
    """sha256 of the manifest's bytes and each trajectory's name, size and modification time: it
    changes whenever the run does (an episode written, a resume, a regrade)."""
    digest = hashlib.sha256((folder / MANIFEST).read_bytes())
    for path in sorted((folder / EPISODES_DIR).glob("*.jsonl")):
        stat = path.stat()
        digest.update(f"{path.name}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()


def index_runs(store: RunStore, paths: Iterable[Path], rebuild: bool = False) -> IndexReport:
    """Index every run folder under ``paths``; ``rebuild`` empties the store first. A folder that
    cannot be read is named in ``problems``; a store that cannot be written stops it (``StoreError``)."""
    if rebuild:
        store.reset()
    report = IndexReport()
    for folder in dict.fromkeys(run_folders(paths)):
        try:
            run_id, changed = index_run(store, folder)
        except StoreError:  # the store failed, not the folder: the others would fail alike
            raise
        except (CoderEvalError, OSError) as exc:
            report.problems.append(f"{folder}: {exc}")
            continue
        (report.indexed if changed else report.unchanged).append(run_id)
    return report


def index_run(store: RunStore, folder: Path) -> tuple[str, bool]:
    """Index one run folder; returns its run id and whether anything was written."""
    folder = folder.resolve()
    manifest = read_manifest(folder)
    print_ = fingerprint(folder)
    with guarded(store.path, "read"):
        row = store.con.execute(
            "SELECT fingerprint, run_dir FROM runs WHERE run_id = ?", [manifest.run_id]
        ).fetchone()
    if row is not None and row == (print_, str(folder)):
        return manifest.run_id, False
    parsed = parsed_run(folder)
    with guarded(store.path, f"index {folder} into"), transaction(store.con):
        for table in RUN_TABLES:
            store.con.execute(f"DELETE FROM {table} WHERE run_id = ?", [manifest.run_id])
        insert_rows(store.con, parsed)
        insert_run(store, folder, manifest, print_, [p.episode for p in parsed])
    return manifest.run_id, True


def parsed_run(folder: Path) -> list[ParsedEpisode]:
    """The run's trajectories as frame rows, one per episode id (as ``load_runs`` keeps them)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        paths = sorted((folder / EPISODES_DIR).glob("*.jsonl"))
        return drop_duplicates([parse_trajectory(path) for path in paths])


@contextlib.contextmanager
def transaction(con: duckdb.DuckDBPyConnection) -> Iterator[None]:
    """One transaction, committed at the end of the block, rolled back when it raises; a rollback
    that fails (a commit that failed, on a full disk, has already ended the transaction) is let go,
    so the error reported is the one that happened."""
    con.execute("BEGIN TRANSACTION")
    try:
        yield
        con.execute("COMMIT")
    except BaseException:
        with contextlib.suppress(duckdb.Error):
            con.execute("ROLLBACK")
        raise


MAX_ROW_BYTES = 2**32 - 1
"""The longest row the JSON reader takes (its default, 16 MB, is less than one message may hold)."""


def insert_rows(con: duckdb.DuckDBPyConnection, parsed: Sequence[ParsedEpisode]) -> None:
    """The four frames' rows, in their declared column order and types.

    Each table's rows go through a scratch file of JSON lines that DuckDB reads with every column's
    type given (``read_json``): a statement's parameters cost DuckDB about 10 µs each (0.3 s of a
    400-episode run's end), the reader about 1 % of that. JSON keeps each value as it is (text with
    any character, a float to its last bit, a list of tags)."""
    tables: dict[str, list[Row]] = {
        "episodes": [tuple(p.episode.get(c.name) for c in EPISODES) for p in parsed],
        "criteria": [r for p in parsed for r in p.criteria],
        "tool_calls": [r for p in parsed for r in p.tool_calls],
        "messages": [r for p in parsed for r in p.messages],
    }
    with tempfile.TemporaryDirectory(prefix="coder_eval-index-") as scratch:
        for table, rows in tables.items():
            if rows:
                _insert(con, table, rows, Path(scratch) / f"{table}.jsonl")


def _insert(con: duckdb.DuckDBPyConnection, table: str, rows: list[Row], scratch: Path) -> None:
    columns = FRAMES[table]
    with scratch.open("wb") as out:
        for row in rows:
            values = {c.name: typed(value, c) for value, c in zip(row, columns, strict=True)}
            out.write(utf8(json.dumps(values, ensure_ascii=False)) + b"\n")
    names = ", ".join(f'"{c.name}"' for c in columns)
    types = ", ".join(f"'{c.name}': '{sql_type(c)}'" for c in columns)
    con.execute(
        f"INSERT INTO {table} ({names}) SELECT {names} FROM read_json(?, format = 'newline_delimited',"
        f" columns = {{{types}}}, maximum_object_size = {MAX_ROW_BYTES})",
        [str(scratch)],
    )


def utf8(text: str) -> bytes:
    """``text`` in UTF-8, each lone surrogate (text an agent sent as ``"\\ud800"``, which no
    character is) as U+FFFD, the replacement character."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return replace_surrogates(text).encode("utf-8")


def typed(value: Any, column: Column) -> Any:
    """``value`` as the frames hold it in ``column``'s declared dtype (a missing number or text is
    NULL, never NaN; a dict column is JSON text)."""
    if missing(value):
        return None
    if column.name in JSON_COLUMNS:
        return json.dumps(value, default=str)
    match column.dtype:
        case "str":
            return str(value)
        case "float64":
            return float(value)
        case "int64":
            return int(value)
        case "bool" | "boolean":
            return bool(value)
    return value


def missing(value: Any) -> bool:
    """None or NaN: NULL in the store, left out of a sum."""
    return value is None or (isinstance(value, float) and math.isnan(value))


def insert_run(
    store: RunStore, folder: Path, manifest: RunManifest, print_: str, episodes: list[dict[str, Any]]
) -> None:
    """The run's row (provenance, totals, headline) and one row per variant."""
    values = run_row(folder, manifest, print_, episodes)
    marks = ", ".join("?" * len(values))
    store.con.execute(f"INSERT INTO runs ({', '.join(values)}) VALUES ({marks})", list(values.values()))
    tasks = [[manifest.run_id, task, manifest.task_hashes.get(task)] for task in manifest.tasks]
    if tasks:
        store.con.execute(
            f"INSERT INTO tasks VALUES {', '.join(['(?, ?, ?)'] * len(tasks))}", [v for t in tasks for v in t]
        )
    for v in manifest.experiment.variants if manifest.experiment else []:
        store.con.execute(
            "INSERT INTO variants VALUES (?, ?, ?, ?, ?, ?)",
            [manifest.run_id, v.variant_id, v.description, v.repeats, v.agents, v.models],
        )


def run_row(
    folder: Path, manifest: RunManifest, print_: str, episodes: list[dict[str, Any]]
) -> dict[str, Any]:
    """The ``runs`` table's row of one run."""
    valid = [bool(e["passed"]) for e in episodes if e.get("passed") is not None]
    costs = [float(e["cost_usd"]) for e in episodes if not missing(e.get("cost_usd"))]
    source = manifest.source
    headline = manifest.headline or {}
    return {
        "run_id": manifest.run_id, "run_dir": str(folder), "fingerprint": print_,
        "indexed_at": datetime.now(UTC), "created_at": manifest.created_at,
        "status": manifest.status, "experiment_id": manifest.experiment_id,
        "description": manifest.description, "suite": suite_of(manifest),
        "variants": manifest.variants, "agents": distinct(episodes, "agent"),
        "models": distinct(episodes, "model"), "tags": distinct_tags(episodes),
        "n_tasks": len(manifest.tasks), "n_episodes": len(episodes), "n_valid": len(valid),
        "n_passed": sum(valid),
        "pass_rate": sum(valid) / len(valid) if valid else None,
        "cost_usd": float(sum(costs)),
        "coder_eval_version": manifest.versions.get("coder_eval"),
        "git_commit": source.git_commit if source else None,
        "git_branch": source.git_branch if source else None,
        "git_dirty": source.git_dirty if source else None,
        "headline_verdict": headline.get("verdict"), "headline_line": headline.get("line"),
        "manifest": manifest.model_dump_json(),
    }  # fmt: skip


def suite_of(manifest: RunManifest) -> str:
    """The run's task paths as given (absolute), one per line; the experiment file when there are none."""
    paths = manifest.inputs.paths if manifest.inputs else []
    experiment = manifest.inputs.experiment if manifest.inputs else None
    return "\n".join(paths or ([experiment] if experiment else []))


def distinct(episodes: list[dict[str, Any]], column: str) -> list[str]:
    """The distinct values of a text column, sorted, missing ones left out."""
    return sorted({str(e[column]) for e in episodes if e.get(column) is not None})


def distinct_tags(episodes: list[dict[str, Any]]) -> list[str]:
    """Every task tag the episodes carry, sorted."""
    return sorted({str(t) for e in episodes for t in (e.get("tags") or [])})
