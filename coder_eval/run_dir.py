"""A run directory: ``runs/<run_id>/run.json`` (the manifest), ``episodes/<episode_id>.jsonl`` and
``snapshots/<episode_id>.tar.gz`` (each episode's final workspace, for re-grading).

Example::

    run = RunDir.create(Path("runs"), manifest)   # holds the run's lock (run_lock.py) until released
    run.episode_path("hello--default--r0")   # runs/<run_id>/episodes/hello--default--r0.jsonl
    RunDir.open(Path("runs/latest")).finished_episodes()
    RunDir.open(Path("runs/latest"), lock=True)   # to write it: RunLocked while another process does

A writer also keeps ``.reserve`` (a few times the manifest's size) while it holds the lock: when the
disk fills, the reserve is given up so that ``run.json`` can still say ``interrupted``.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import NamedTuple

from coder_eval.errors import InputError, RunWriteError
from coder_eval.manifest import (
    MANIFEST,
    PlannedEpisode,
    RegradeRecord,
    ResumeRecord,
    RunManifest,
    RunStatus,
    SnapshotTotals,
    read_manifest,
)
from coder_eval.run_lock import RunLock
from coder_eval.trajectory import DISK_SYNC, EpisodeEnd, EpisodeStart, now, read_trajectory

EPISODES = "episodes"
PARTIAL = "partial"
SNAPSHOTS = "snapshots"
RESERVE = ".reserve"
RESERVE_MIN_BYTES = 256 * 1024
DISK_FULL = frozenset({errno.ENOSPC, errno.EDQUOT})
NAME_MARGIN = len(".") + len(".jsonl.attempt99.tmp")
"""Bytes the longest file named after an episode adds to its id (``.<id>.jsonl.attempt<N>.tmp``)."""
DEFAULT_NAME_MAX = 255


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


class Recorded(NamedTuple):
    """What a run directory holds of one episode: its first and last events, as read."""

    start: EpisodeStart | None
    end: EpisodeEnd | None
    complete: bool
    tampered: bool


class RunDir:
    """A run's directory on disk; one created, or opened with ``lock=True``, holds the run's lock."""

    def __init__(self, path: Path, lock: RunLock | None = None) -> None:
        self.path = path
        self.tampered: list[str] = []
        self.lock = lock
        self._read: dict[Path, tuple[tuple[int, int, int], Recorded]] = {}

    @classmethod
    def create(cls, runs_root: Path, manifest: RunManifest) -> RunDir:
        """Make ``<runs_root>/<run_id>``, lock it, write the manifest and point ``<runs_root>/latest``
        at it. ``RunWriteError`` when the folder cannot be made; ``InputError`` when it exists."""
        run = cls(runs_root / manifest.run_id)
        try:
            (run.path / EPISODES).mkdir(parents=True, exist_ok=False)
        except FileExistsError as exc:
            raise InputError(
                f"{run.path} already exists; use --resume to finish it or choose another --run-dir"
            ) from exc
        except OSError as exc:
            raise RunWriteError.of(run.path, exc) from exc
        run._hold()
        run.write_manifest(manifest)
        _point_latest(runs_root, manifest.run_id)
        return run

    @classmethod
    def open(cls, path: Path, *, lock: bool = False) -> RunDir:
        """Open an existing run directory (``runs/latest`` is followed); with ``lock``, to write it."""
        resolved = path.resolve()
        if not (resolved / MANIFEST).is_file():
            raise InputError(
                f"{path}: not a run directory (no {MANIFEST}); pass runs/<run_id> or runs/latest"
            )
        run = cls(resolved)
        if lock:
            run._hold()
        return run

    def _hold(self) -> None:
        self.lock = RunLock.acquire(self.path)
        with contextlib.suppress(OSError):  # without room for it the run stops at its first write
            _reserve(self.path / RESERVE, self.path / MANIFEST)

    def release(self) -> None:
        """Give up the reserve and the lock (both also go when the process ends, however it ends)."""
        if self.lock is not None:
            with contextlib.suppress(OSError):
                (self.path / RESERVE).unlink(missing_ok=True)
            self.lock.release()
            self.lock = None

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
        return read_manifest(self.path)

    def write_manifest(self, manifest: RunManifest) -> None:
        """Atomically replace ``run.json``; on a full disk the writer's reserve makes room for it.
        ``RunWriteError`` when it cannot be written, or when a trajectory closed before it could not be
        synced to disk (the manifest never counts an episode the disk does not hold)."""
        DISK_SYNC.wait()
        manifest.updated_at = now()
        data = manifest.model_dump_json(indent=2).encode()
        try:
            _replace(self.path / MANIFEST, data)
        except OSError as exc:
            reserve = self.path / RESERVE
            if exc.errno not in DISK_FULL or self.lock is None or not reserve.exists():
                raise RunWriteError.of(self.path / MANIFEST, exc) from exc
            with contextlib.suppress(OSError):
                reserve.unlink()
            try:
                _replace(self.path / MANIFEST, data)
            except OSError as again:
                raise RunWriteError.of(self.path / MANIFEST, again) from again

    def trajectory_paths(self) -> list[Path]:
        return sorted(self.episodes_dir.glob("*.jsonl"))

    def finished_episodes(self) -> dict[str, EpisodeEnd]:
        """The ``episode_end`` of every episode whose trajectory is complete, by episode id.

        A trajectory written to after its end (a second ``episode_end``, or events after it) is not
        finished: its id is listed in ``self.tampered``, and ``--resume`` sets it aside and runs it again.
        """
        finished = {}
        self.tampered = []
        for episode, recorded in self.recorded_episodes().items():
            if recorded.tampered:
                self.tampered.append(episode)
            elif recorded.complete and recorded.end is not None:
                finished[episode] = recorded.end
        return finished

    def recorded_episodes(self) -> dict[str, Recorded]:
        """Each trajectory's ``episode_start`` and ``episode_end``, by episode id (a file unchanged
        since it was last read here is not read again)."""
        recorded = {}
        for path in self.trajectory_paths():
            info = path.stat()
            key = (info.st_ino, info.st_size, info.st_mtime_ns)
            cached = self._read.get(path)
            if cached is None or cached[0] != key:
                trajectory = read_trajectory(path)
                read = Recorded(trajectory.start, trajectory.end, trajectory.complete, trajectory.tampered)
                cached = key, read
                self._read[path] = cached
            recorded[path.stem] = cached[1]
        return recorded

    def set_aside(self, episode_id: str) -> Path | None:
        """Move an episode's trajectory (and its failed attempts) to ``partial/`` (kept, never
        deleted) before a re-run; ``RunWriteError`` when it cannot be moved."""
        src = self.episode_path(episode_id)
        attempts = sorted(self.episodes_dir.glob(f"{src.name}.attempt*"))  # ids are filename-safe
        if not src.exists() and not attempts:
            return None
        dest_dir = self.path / PARTIAL
        try:
            dest_dir.mkdir(exist_ok=True)
            n = 0
            while (dest := dest_dir / f"{episode_id}.{n}.jsonl").exists():  # never overwrite an earlier one
                n += 1
            for attempt in attempts:
                attempt.replace(dest_dir / f"{dest.name}{attempt.name.removeprefix(src.name)}")
            if src.exists():
                src.replace(dest)
        except OSError as exc:
            raise RunWriteError.of(src, exc) from exc
        return dest


def check_episode_names(episodes: Iterable[tuple[str, str]], folder: Path) -> None:
    """Refuse (``InputError``, exit 2) episodes whose files would be named longer than the file
    system under ``folder`` allows; ``episodes`` are (episode id, task id) pairs."""
    limit = name_max(folder)
    long = [(e, t) for e, t in episodes if len(e.encode()) + NAME_MARGIN > limit]
    if long:
        episode, task = long[0]
        more = f" (and {len(long) - 1} more episodes)" if len(long) > 1 else ""
        raise InputError(
            f"task {task!r}: the episode id {episode!r} makes file names of "
            f"{len(episode.encode()) + NAME_MARGIN} bytes, more than the {limit} the file system "
            f"at {folder} allows{more}; shorten the task id or the variant id"
        )


def name_max(folder: Path) -> int:
    """The longest file name the file system holding ``folder`` (or its nearest existing parent) allows."""
    for candidate in [folder, *folder.absolute().parents]:
        if candidate.is_dir():
            with contextlib.suppress(OSError, ValueError):
                return int(os.pathconf(candidate, "PC_NAME_MAX"))
            break
    return DEFAULT_NAME_MAX


def _replace(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        tmp.write_bytes(data)
        tmp.replace(path)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


def _reserve(reserve: Path, manifest: Path) -> None:
    """Set aside room for a few manifests (``write_manifest`` gives it up when the disk fills)."""
    size = max(RESERVE_MIN_BYTES, 4 * (manifest.stat().st_size if manifest.exists() else 0))
    with reserve.open("wb") as handle:
        try:
            os.posix_fallocate(handle.fileno(), 0, size)
        except OSError:
            handle.write(b"\0" * size)


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


__all__ = [  # the manifest's names too: run_dir is where run directories are read and written
    "EPISODES",
    "MANIFEST",
    "PARTIAL",
    "RESERVE",
    "SNAPSHOTS",
    "PlannedEpisode",
    "Recorded",
    "RegradeRecord",
    "ResumeRecord",
    "RunDir",
    "RunManifest",
    "RunStatus",
    "SnapshotTotals",
    "check_episode_names",
    "episode_id",
    "name_max",
    "new_run_id",
    "read_manifest",
    "safe_id",
]
