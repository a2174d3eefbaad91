"""Which run a baseline reference names: a run folder, a run id in the store, or ``latest-on-BRANCH``
(the newest run in the store whose suite was on that git branch and that ran to its end: completed,
or stopped by its budget; an interrupted run may still be resumed and is never one).

A budget-stopped baseline is a partial one: its episodes are as good as any, but the tasks it never
reached are not paired, and the comparison says so (``BUDGET_STOPPED_NOTE``).

Example::

    found = find_baseline("latest-on-main", Path("runs/history.duckdb"), exclude="20261202-...")
    found.run_id, found.runs.episodes.shape, found.hashes      # None when no run is on main yet
"""

from __future__ import annotations

import json
import warnings
from dataclasses import dataclass
from pathlib import Path

from coder_eval.analysis.answer.baseline_run import Regression, against_baseline
from coder_eval.analysis.frames.load import Runs, load_runs
from coder_eval.errors import ManifestError, StoreBusy, StoreError
from coder_eval.manifest import MANIFEST, read_manifest
from coder_eval.store.connection import RunStore
from coder_eval.store.history import load_store

LATEST_ON = "latest-on-"
BASELINE_STATUSES = ("completed", "budget_stopped")
"""The statuses of a run ``latest-on-BRANCH`` may take: it ran to its end (its budget may have ended it)."""


@dataclass(frozen=True)
class Baseline:
    """A baseline run: its id, frames, task content hashes, and where it was found."""

    run_id: str
    runs: Runs
    hashes: dict[str, str]
    where: str
    git_branch: str | None = None
    git_commit: str | None = None
    status: str = "completed"
    episodes_planned: int | None = None
    """How many episodes the baseline planned (its manifest's list), when known."""

    def partial_note(self) -> str | None:
        """What a budget-stopped baseline leaves out, or None for a run that ran to its end."""
        if self.status != "budget_stopped":
            return None
        measured = self.runs.episodes["episode_id"].nunique()
        of = f" of {self.episodes_planned}" if self.episodes_planned else ""
        return (
            f"the baseline `{self.run_id}` was stopped by its budget after {measured}{of} episodes: "
            "the comparison pairs the tasks both runs measured, and lists the rest as not paired"
        )


def is_folder(reference: str) -> bool:
    return (Path(reference) / MANIFEST).is_file()


def check_reference(reference: str, store: Path, named: str = "--baseline") -> None:
    """Before a run starts: a folder whose run.json is not a manifest, a folder or run id that names
    nothing, or ``latest-on-`` with no branch is bad input (``InputError``, exit 2);
    ``latest-on-BRANCH`` may find nothing yet (the first run on a branch has no baseline). A store
    another process holds is not waited out here: the run's end looks again. ``named``: where the
    reference was given, as the messages say it."""
    if reference.startswith(LATEST_ON):
        if not reference[len(LATEST_ON) :].strip():
            raise StoreError(
                f"{named} {reference!r}: names no branch (an unset variable, such as $BRANCH in CI?); "
                "name one, as in --baseline latest-on-main"
            )
        return
    if is_folder(reference):
        try:
            read_manifest(Path(reference))
        except ManifestError as exc:
            raise ManifestError(f"{named} {reference}: not a run folder: {exc}") from exc
        return
    if Path(reference).exists() or "/" in reference:
        raise StoreError(f"{named} {reference}: not a run folder (no {MANIFEST})")
    if not store.is_file():
        raise StoreError(
            f"{named} {reference}: no run folder of that name, and no run store {store} (no such run)"
        )
    try:
        with RunStore.open(store, read_only=True) as opened:
            found = opened.con.execute("SELECT 1 FROM runs WHERE run_id = ?", [reference]).fetchone()
    except StoreBusy:
        return
    if not found:
        raise StoreError(f"{named} {reference}: no run folder of that name, and no such run in {store}")


def find_baseline(reference: str, store: Path, exclude: str | None = None) -> Baseline | None:
    """The baseline ``reference`` names; None when ``latest-on-BRANCH`` finds no run (or no store)."""
    if is_folder(reference):
        manifest = read_manifest(Path(reference))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            runs = load_runs(reference)
        branch, commit = (
            (manifest.source.git_branch, manifest.source.git_commit) if manifest.source else (None, None)
        )
        return Baseline(
            manifest.run_id, runs, dict(manifest.task_hashes), reference, branch, commit, manifest.status,
            len(manifest.episodes) or None,
        )  # fmt: skip
    if reference.startswith(LATEST_ON) and not store.is_file():
        return None
    with RunStore.open(store, read_only=True) as opened:
        run_id = (
            latest_on(opened, reference[len(LATEST_ON) :], exclude)
            if reference.startswith(LATEST_ON)
            else reference
        )
        if run_id is None:
            return None
        row = opened.con.execute(
            "SELECT git_branch, git_commit, status, manifest FROM runs WHERE run_id = ?", [run_id]
        ).fetchone()
        if row is None:
            raise StoreError(f"--baseline {reference}: no such run in {store}")
        hashes = dict(
            opened.con.execute(
                "SELECT task_id, content_hash FROM tasks WHERE run_id = ?", [run_id]
            ).fetchall()
        )
        runs = load_store(opened, [run_id])
    hashes = {k: v for k, v in hashes.items() if v}
    planned = len(json.loads(row[3] or "{}").get("episodes") or []) or None
    return Baseline(run_id, runs, hashes, f"{store}", row[0], row[1], row[2] or "completed", planned)


def latest_on(store: RunStore, branch: str, exclude: str | None) -> str | None:
    """The newest run on ``branch`` that ran to its end (``BASELINE_STATUSES``), other than ``exclude``."""
    row = store.con.execute(
        "SELECT run_id FROM runs WHERE git_branch = ? AND status IN (?, ?) AND run_id != ? "
        "ORDER BY created_at DESC LIMIT 1",
        [branch, *BASELINE_STATUSES, exclude or ""],
    ).fetchone()
    return row[0] if row else None


def compare_with_baseline(
    run: Path, reference: str, store: Path
) -> tuple[Regression | None, Baseline | None, str | None]:
    """The run folder ``run`` against the baseline ``reference`` names: the comparison, the baseline,
    and a note: why there is no baseline yet, or what a budget-stopped baseline leaves out."""
    manifest = read_manifest(run)
    found = find_baseline(reference, store, exclude=manifest.run_id)
    if found is None:
        return None, None, f"no baseline: {reference} names no completed run in {store} yet; nothing compared"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        candidate = load_runs(run)
    regression = against_baseline(candidate, found.runs, manifest.task_hashes, found.hashes)
    return regression, found, found.partial_note()
