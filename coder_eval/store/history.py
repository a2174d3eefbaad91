"""Reading the store: runs listed by filters, and the analysis frames of any runs in it.

Example::

    with RunStore.open(read_only=True) as store:
        list_runs(store, RunFilter(branch="main", task="hello"))    # one row per run, newest first
        runs = load_store(store, ["20261202-a", "20261202-b"])       # a coder_eval.analysis.Runs
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, fields
from datetime import datetime
from pathlib import Path
from typing import Any

import pandas as pd

from coder_eval.analysis.frames.columns import names
from coder_eval.analysis.frames.load import Runs
from coder_eval.store.connection import RunStore
from coder_eval.store.schema import FRAMES, JSON_COLUMNS

LISTED = (
    "run_id", "created_at", "status", "git_branch", "git_commit", "experiment_id", "variants",
    "n_episodes", "n_valid", "pass_rate", "cost_usd", "headline_verdict", "headline_line", "run_dir",
)  # fmt: skip
"""The columns ``list_runs`` returns, in order."""


@dataclass(frozen=True)
class RunFilter:
    """Which runs to list: each given field narrows (``suite``: a substring of a task path; ``task``:
    the run has an episode of it; ``agent``, ``model``, ``tag``: some episode has it; ``since`` /
    ``until``: created on or after / before; ``branch``: the suite's git branch)."""

    suite: str | None = None
    task: str | None = None
    agent: str | None = None
    model: str | None = None
    tag: str | None = None
    branch: str | None = None
    status: str | None = None
    since: datetime | None = None
    until: datetime | None = None

    def where(self) -> tuple[str, list[Any]]:
        """The SQL condition and its parameters."""
        rules = {
            "suite": "suite ILIKE '%' || ? || '%'",
            "task": "EXISTS (SELECT 1 FROM episodes e WHERE e.run_id = runs.run_id AND e.task_id = ?)",
            "agent": "list_contains(agents, ?)",
            "model": "list_contains(models, ?)",
            "tag": "list_contains(tags, ?)",
            "branch": "git_branch = ?",
            "status": "status = ?",
            "since": "created_at >= ?",
            "until": "created_at < ?",
        }
        given = [
            (rules[f.name], getattr(self, f.name)) for f in fields(self) if getattr(self, f.name) is not None
        ]
        return " AND ".join(["TRUE", *(rule for rule, _ in given)]), [value for _, value in given]


def list_runs(store: RunStore, runs: RunFilter = RunFilter(), limit: int | None = None) -> pd.DataFrame:
    """One row per run (``LISTED``), newest first."""
    where, params = runs.where()
    cap = f" LIMIT {int(limit)}" if limit else ""
    sql = f"SELECT {', '.join(LISTED)} FROM runs WHERE {where} ORDER BY created_at DESC, run_id{cap}"
    return store.con.execute(sql, params).df()


def run_ids(store: RunStore) -> list[str]:
    """Every run id in the store, newest first."""
    return [r[0] for r in store.con.execute("SELECT run_id FROM runs ORDER BY created_at DESC").fetchall()]


def load_store(store: RunStore, ids: Sequence[str] | None = None) -> Runs:
    """The four analysis frames of the runs ``ids`` (every run, oldest first, when None), in that
    order, as ``load_runs`` makes them from their folders; ``run_dirs`` names the folders that still
    exist (the declared comparison reads their run.json)."""
    chosen = list(ids) if ids is not None else run_ids(store)[::-1]
    wanted = pd.DataFrame({"run_id": pd.Series(chosen, dtype=object), "pos": range(len(chosen))})
    store.con.register("wanted_ids", wanted)
    store.con.execute(
        "CREATE OR REPLACE TEMP TABLE wanted AS SELECT CAST(run_id AS VARCHAR) AS run_id, pos FROM wanted_ids"
    )
    store.con.unregister("wanted_ids")
    frames = {name: table_frame(store, name) for name in FRAMES}
    dirs = store.con.execute("SELECT run_dir FROM runs JOIN wanted USING (run_id) ORDER BY pos").fetchall()
    found = tuple(Path(d) for (d,) in dirs if d and (Path(d) / "run.json").is_file())
    return Runs(**frames, run_dirs=found)


def table_frame(store: RunStore, name: str) -> pd.DataFrame:
    """One table's rows of the wanted runs, in the frame's declared columns and dtypes."""
    columns = FRAMES[name]
    df = store.con.execute(
        f"SELECT t.* FROM {name} t JOIN wanted w USING (run_id) ORDER BY w.pos, t.rowid"
    ).df()
    for column in JSON_COLUMNS & set(df.columns):
        df[column] = [json.loads(v) if isinstance(v, str) else {} for v in df[column]]
    if "tags" in df.columns:
        df["tags"] = [list(v) if v is not None else [] for v in df["tags"]]
    return df[names(columns)].astype({c.name: c.dtype for c in columns})
