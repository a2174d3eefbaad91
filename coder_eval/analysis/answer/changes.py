"""What changed between two gradings of the same episodes: a run and its re-grade.

Example::

    before, after = load_runs("runs/old"), load_runs("runs/regraded")
    outcome_changes(before.episodes, after.episodes).query("changed")
    criterion_changes(before.criteria, after.criteria).query("changed")
    regraded_source("runs/regraded")    # PosixPath('runs/old'), from run.json; None for a plain run

Episodes are matched on ``episode_id`` (the same task, variant and repeat), so the two frames may come
from different runs; an episode or criterion present on one side only appears with the other side
empty.
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from coder_eval.run_dir import MANIFEST, read_manifest

OUTCOME_CHANGE_COLUMNS = [
    "episode_id",
    "task_id",
    "variant_id",
    "outcome_before",
    "outcome_after",
    "score_before",
    "score_after",
    "changed",
]
CRITERION_CHANGE_COLUMNS = [
    "episode_id",
    "criterion_id",
    "passed_before",
    "passed_after",
    "score_before",
    "score_after",
    "error_after",
    "changed",
]


def outcome_changes(before: pd.DataFrame, after: pd.DataFrame) -> pd.DataFrame:
    """One row per episode: outcome and score in each grading, and whether the outcome changed."""
    keys = ["episode_id", "task_id", "variant_id"]
    merged = before[[*keys, "outcome", "score"]].merge(
        after[[*keys, "outcome", "score"]], on=keys, how="outer", suffixes=("_before", "_after")
    )
    merged["changed"] = merged["outcome_before"].ne(merged["outcome_after"])
    return merged[OUTCOME_CHANGE_COLUMNS].sort_values("episode_id").reset_index(drop=True)


def criterion_changes(before: pd.DataFrame, after: pd.DataFrame) -> pd.DataFrame:
    """One row per (episode, criterion): the verdict in each grading, and whether it changed (a
    criterion added or removed counts as changed)."""
    keys = ["episode_id", "criterion_id"]
    merged = before[[*keys, "passed", "score"]].merge(
        after[[*keys, "passed", "score", "error"]], on=keys, how="outer", suffixes=("_before", "_after")
    )
    merged = merged.rename(columns={"error": "error_after"})
    merged["changed"] = merged["passed_before"].ne(merged["passed_after"]) | merged["score_before"].ne(
        merged["score_after"]
    )
    return merged[CRITERION_CHANGE_COLUMNS].sort_values(keys).reset_index(drop=True)


def regraded_source(run_dir: str | os.PathLike[str]) -> Path | None:
    """The run a re-graded run came from (its ``run.json`` says), else None."""
    manifest_path = Path(run_dir) / MANIFEST
    if not manifest_path.is_file():
        return None
    manifest = read_manifest(Path(run_dir))
    return Path(manifest.regraded_from.run_dir) if manifest.regraded_from is not None else None
