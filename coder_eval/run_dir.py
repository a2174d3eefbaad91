"""A run directory: ``runs/<run_id>/run.json`` (the manifest), ``episodes/<episode_id>.jsonl`` and
``snapshots/<episode_id>.tar.gz`` (each episode's final workspace, for re-grading).

Example::

    run = RunDir.create(Path("runs"), manifest)
    run.episode_path("hello--default--r0")   # runs/<run_id>/episodes/hello--default--r0.jsonl
    RunDir.open(Path("runs/latest")).finished_episodes()
"""

from __future__ import annotations

import contextlib
import os
import re
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from coder_eval.errors import InputError
from coder_eval.trajectory import SCHEMA_VERSION, EpisodeEnd, now, read_trajectory

MANIFEST = "run.json"
EPISODES = "episodes"
PARTIAL = "partial"
SNAPSHOTS = "snapshots"
RunStatus = Literal["running", "completed", "interrupted", "budget_stopped"]


class PlannedEpisode(BaseModel):
    """One planned episode in the manifest."""

    model_config = ConfigDict(extra="forbid")
    episode_id: str
    task_id: str
    variant_id: str
    repeat: int


class SnapshotTotals(BaseModel):
    """What a run keeps of its episodes' workspaces (``snapshots/``)."""

    model_config = ConfigDict(extra="forbid")
    kept: bool = Field(default=True, description="Workspace snapshots were kept (false: --no-snapshots).")
    max_mb: float | None = Field(default=None, description="The per-episode cap, MB (compressed).")
    count: int = Field(default=0, description="Snapshots in snapshots/.")
    bytes: int = Field(default=0, description="Their total size.")


class RegradeRecord(BaseModel):
    """How a run made by ``coder-eval regrade`` came about, and what changed."""

    model_config = ConfigDict(extra="forbid")
    run_id: str = Field(description="The run whose agent events were re-graded.")
    run_dir: str = Field(description="Its directory.")
    task_files: list[str] = Field(default_factory=list, description="Task files whose criteria were used.")
    episodes: int = Field(default=0, description="Episodes in the new run.")
    changed: int = Field(default=0, description="Episodes whose outcome changed.")
    outcomes_before: dict[str, int] = Field(default_factory=dict, description="Outcome counts before.")
    outcomes_after: dict[str, int] = Field(default_factory=dict, description="Outcome counts after.")
    criteria_kept: int = Field(
        default=0, description="Unchanged workspace criteria kept as recorded (the episode had no snapshot)."
    )
    criteria_not_regraded: int = Field(
        default=0, description="Workspace criteria left as errors: no snapshot, and the criterion changed."
    )
    evaluation_cost_usd: float | None = Field(
        default=None, description="What the model judges cost in this re-grade; null when a price is unknown."
    )
    seconds: float = Field(default=0.0, description="Wall time of the re-grade.")


class RunManifest(BaseModel):
    """``run.json``: what a run was asked to do, and how far it got."""

    model_config = ConfigDict(extra="forbid")
    schema_version: int = Field(default=SCHEMA_VERSION, description="Same version as the trajectories.")
    run_id: str = Field(description="Directory name under runs/.")
    experiment_id: str = Field(default="default", description="Experiment that produced the run.")
    description: str = Field(default="", description="Experiment description.")
    created_at: datetime = Field(default_factory=now, description="When the run was created (UTC).")
    updated_at: datetime = Field(default_factory=now, description="Last manifest update (UTC).")
    status: RunStatus = Field(default="running", description="running, completed, interrupted, ...")
    command: list[str] = Field(default_factory=list, description="The command line that started it.")
    variants: list[str] = Field(default_factory=list, description="Variant ids, in experiment order.")
    tasks: list[str] = Field(default_factory=list, description="Task ids.")
    repeats: int = Field(default=1, description="Repeats per task and variant (the most any variant has).")
    episodes: list[PlannedEpisode] = Field(default_factory=list, description="Every planned episode.")
    versions: dict[str, str] = Field(default_factory=dict, description="coder_eval and Python versions.")
    snapshots: SnapshotTotals | None = Field(default=None, description="Kept workspace snapshots.")
    regraded_from: RegradeRecord | None = Field(
        default=None, description="Set on a run made by coder-eval regrade."
    )
    extra: dict[str, Any] = Field(default_factory=dict, description="Budget and gate results, notes.")


def safe_id(text: str) -> str:
    """A filename-safe id: ``"fix bug/1"`` -> ``"fix-bug-1"``."""
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-.")
    return cleaned or "x"


def episode_id(task_id: str, variant_id: str, repeat: int) -> str:
    """The deterministic episode id: ``<task_id>--<variant_id>--r<repeat>``, filename-safe."""
    return f"{safe_id(task_id)}--{safe_id(variant_id)}--r{repeat}"


def new_run_id() -> str:
    """A sortable run id from the current UTC time: ``20261129-183301-123456``."""
    return now().strftime("%Y%m%d-%H%M%S-%f")


class RunDir:
    """A run's directory on disk."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.tampered: list[str] = []

    @classmethod
    def create(cls, runs_root: Path, manifest: RunManifest) -> RunDir:
        """Make ``<runs_root>/<run_id>``, write the manifest and point ``<runs_root>/latest`` at it."""
        run = cls(runs_root / manifest.run_id)
        (run.path / EPISODES).mkdir(parents=True, exist_ok=False)
        run.write_manifest(manifest)
        _point_latest(runs_root, manifest.run_id)
        return run

    @classmethod
    def open(cls, path: Path) -> RunDir:
        """Open an existing run directory (``runs/latest`` is followed)."""
        resolved = path.resolve()
        if not (resolved / MANIFEST).is_file():
            raise InputError(
                f"{path}: not a run directory (no {MANIFEST}); pass runs/<run_id> or runs/latest"
            )
        return cls(resolved)

    @property
    def episodes_dir(self) -> Path:
        return self.path / EPISODES

    def episode_path(self, episode_id: str) -> Path:
        return self.episodes_dir / f"{episode_id}.jsonl"

    def snapshot_path(self, episode_id: str) -> Path:
        """Where an episode's final workspace is kept: ``snapshots/<episode_id>.tar.gz``."""
        return self.path / SNAPSHOTS / f"{episode_id}.tar.gz"

    def snapshot_totals(self, max_mb: float | None) -> SnapshotTotals:
        """Count and total size of the kept snapshots (``max_mb`` None: snapshots were off)."""
        files = list((self.path / SNAPSHOTS).glob("*.tar.gz"))
        return SnapshotTotals(
            kept=max_mb is not None,
            max_mb=max_mb,
            count=len(files),
            bytes=sum(f.stat().st_size for f in files),
        )

    def read_manifest(self) -> RunManifest:
        return RunManifest.model_validate_json((self.path / MANIFEST).read_text(encoding="utf-8"))

    def write_manifest(self, manifest: RunManifest) -> None:
        """Atomically replace ``run.json``."""
        manifest.updated_at = now()
        tmp = self.path / f".{MANIFEST}.tmp"
        tmp.write_text(manifest.model_dump_json(indent=2), encoding="utf-8")
        tmp.replace(self.path / MANIFEST)

    def trajectory_paths(self) -> list[Path]:
        return sorted(self.episodes_dir.glob("*.jsonl"))

    def finished_episodes(self) -> dict[str, EpisodeEnd]:
        """The ``episode_end`` of every episode whose trajectory is complete, by episode id.

        A trajectory written to after its end (a second ``episode_end``, or events after it) is not
        finished: its id is listed in ``self.tampered``, and ``--resume`` sets it aside and runs it again.
        """
        finished = {}
        self.tampered = []
        for path in self.trajectory_paths():
            trajectory = read_trajectory(path)
            if trajectory.tampered:
                self.tampered.append(path.stem)
            elif trajectory.complete and trajectory.end is not None:
                finished[path.stem] = trajectory.end
        return finished

    def set_aside(self, episode_id: str) -> Path | None:
        """Move an incomplete trajectory to ``partial/`` (kept, never deleted) before a re-run."""
        src = self.episode_path(episode_id)
        if not src.exists():
            return None
        dest_dir = self.path / PARTIAL
        dest_dir.mkdir(exist_ok=True)
        n = 0
        while (dest := dest_dir / f"{episode_id}.{n}.jsonl").exists():  # never overwrite an earlier one
            n += 1
        src.replace(dest)
        return dest


def _point_latest(runs_root: Path, run_id: str) -> None:
    """Point ``<runs_root>/latest`` at ``run_id``, best effort.

    A ``latest`` that is not a symlink (say ``--run-dir out/latest`` made it a run directory) is left
    alone; a failure to link never fails the run, and the temporary link never outlives the call.
    """
    link = runs_root / "latest"
    if link.exists() and not link.is_symlink():
        return
    tmp = runs_root / f".latest-{os.getpid()}"
    try:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        tmp.symlink_to(run_id)
        tmp.replace(link)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink()
