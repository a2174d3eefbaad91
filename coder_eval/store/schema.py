"""The store's tables: the four analysis frames, declared once in ``coder_eval.analysis.frames.columns``,
plus a row per run (its manifest's provenance and totals), per variant, and per task (its content hash).

Example::

    con = duckdb.connect("runs/history.duckdb"); create_tables(con)
    con.sql("SELECT run_id, git_branch, pass_rate FROM runs").df()
"""

from __future__ import annotations

import duckdb

from coder_eval.analysis.frames.columns import CRITERIA, EPISODES, MESSAGES, TOOL_CALLS, Column

STORE_SCHEMA_VERSION = 2
"""Bumped when a table changes; a store of another version is rebuilt from the run folders."""
JSON_COLUMNS = frozenset({"details"})
"""Object columns kept as JSON text (a dict each)."""
FRAMES: dict[str, tuple[Column, ...]] = {
    "episodes": EPISODES,
    "criteria": CRITERIA,
    "tool_calls": TOOL_CALLS,
    "messages": MESSAGES,
}
"""Store table -> the frame's declared columns (same names, same order)."""
SQL_TYPES = {
    "str": "VARCHAR",
    "int64": "BIGINT",
    "float64": "DOUBLE",
    "boolean": "BOOLEAN",
    "bool": "BOOLEAN",
}

RUNS = """
CREATE TABLE IF NOT EXISTS runs (
    run_id VARCHAR PRIMARY KEY, run_dir VARCHAR, fingerprint VARCHAR, indexed_at TIMESTAMPTZ,
    created_at TIMESTAMPTZ, status VARCHAR, experiment_id VARCHAR, description VARCHAR,
    suite VARCHAR, variants VARCHAR[], agents VARCHAR[], models VARCHAR[], tags VARCHAR[],
    n_tasks BIGINT, n_episodes BIGINT, n_valid BIGINT, n_passed BIGINT, pass_rate DOUBLE,
    cost_usd DOUBLE, coder_eval_version VARCHAR, git_commit VARCHAR, git_branch VARCHAR,
    git_dirty BOOLEAN, headline_verdict VARCHAR, headline_line VARCHAR, manifest VARCHAR
)"""
VARIANTS = """
CREATE TABLE IF NOT EXISTS variants (
    run_id VARCHAR, variant_id VARCHAR, description VARCHAR, repeats BIGINT,
    agents VARCHAR[], models VARCHAR[]
)"""
TASKS = "CREATE TABLE IF NOT EXISTS tasks (run_id VARCHAR, task_id VARCHAR, content_hash VARCHAR)"
META = "CREATE TABLE IF NOT EXISTS store_meta (key VARCHAR PRIMARY KEY, value VARCHAR)"
RUN_TABLES = ("runs", "variants", "tasks", *FRAMES)
"""Every table holding rows of a run (keyed by run_id)."""


def sql_type(column: Column) -> str:
    """The DuckDB type of a declared column (tags are a list of text; details JSON text)."""
    if column.name == "tags":
        return "VARCHAR[]"
    return "VARCHAR" if column.name in JSON_COLUMNS else SQL_TYPES[column.dtype]


def frame_table(name: str, columns: tuple[Column, ...]) -> str:
    """``CREATE TABLE`` for one frame's table."""
    body = ", ".join(f'"{c.name}" {sql_type(c)}' for c in columns)
    return f"CREATE TABLE IF NOT EXISTS {name} ({body})"


def stored_version(con: duckdb.DuckDBPyConnection) -> str | None:
    """The schema version the store was made with, as recorded (a number, unless damaged); None
    when no version is recorded (a new, empty file, or not a store)."""
    tables = {row[0] for row in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    if "store_meta" not in tables:
        return None
    row = con.execute("SELECT value FROM store_meta WHERE key = 'schema_version'").fetchone()
    return str(row[0]) if row else None


def create_tables(con: duckdb.DuckDBPyConnection) -> None:
    """Every table, when missing; the schema version recorded."""
    con.execute(META)
    con.execute(RUNS)
    con.execute(VARIANTS)
    con.execute(TASKS)
    for name, columns in FRAMES.items():
        con.execute(frame_table(name, columns))
    con.execute("INSERT OR REPLACE INTO store_meta VALUES ('schema_version', ?)", [str(STORE_SCHEMA_VERSION)])


def drop_tables(con: duckdb.DuckDBPyConnection) -> None:
    """Every table of the store (a rebuild starts from nothing)."""
    for name in (*RUN_TABLES, "store_meta"):
        con.execute(f"DROP TABLE IF EXISTS {name}")
