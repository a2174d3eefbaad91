"""An episode's files as bytes: what a worker hands back, and what the submitting process writes.

Example::

    files = await EpisodeFiles.produce(plan, run_id, scratch, keep_bytes)  # on a worker
    end = files.write(run.episode_path(plan.episode_id), keep)             # where the run is

No filesystem is shared: the worker runs the episode into a scratch folder of its own and returns the
trajectory, any failed provider attempts and the kept workspace snapshot as bytes; only the
submitting process writes the run directory, each file atomically, so a reader never sees half of
one.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from dataclasses import dataclass, replace
from pathlib import Path

from coder_eval.agents.raw_events import RAW_EVENTS_DIR, raw_events_enabled, raw_events_path
from coder_eval.episode.plan import EpisodePlan
from coder_eval.episode.runner import run_episode, start_event
from coder_eval.episode.snapshots import SnapshotTarget
from coder_eval.errors import RunWriteError
from coder_eval.run_dir import SNAPSHOTS
from coder_eval.trajectory import EpisodeEnd

ATTEMPT = re.compile(r"\.attempt(\d+)$")


@dataclass(frozen=True)
class EpisodeFiles:
    """A finished episode: its trajectory, those of its failed provider attempts (in order), its
    ``episode_end``, its kept workspace snapshot (None: none was asked for, or it was not kept) and
    its raw event log (None: the worker keeps none)."""

    trajectory: bytes
    attempts: tuple[bytes, ...]
    end: EpisodeEnd
    snapshot: bytes | None = None
    raw_events: bytes | None = None
    """The raw event log (``coder_eval.agents.raw_events``), when the worker keeps one."""

    @classmethod
    async def produce(
        cls, plan: EpisodePlan, run_id: str, scratch: Path, keep_bytes: int | None = None
    ) -> EpisodeFiles:
        """Run the episode into ``scratch`` (keeping a snapshot of up to ``keep_bytes`` when given)
        and read back what it wrote."""
        path = scratch / f"{plan.episode_id}.jsonl"
        keep = _scratch_target(scratch, plan, keep_bytes)
        raw = scratch / RAW_EVENTS_DIR / path.name if raw_events_enabled() else None
        end = await run_episode(plan, run_id, path, keep=keep, durable=False, raw_events=raw)  # synced there
        attempts = sorted(scratch.glob(f"{path.name}.attempt*"), key=_attempt_number)
        snapshot = keep.path.read_bytes() if keep is not None and keep.path.is_file() else None
        raw_bytes = raw.read_bytes() if raw is not None and raw.is_file() else None
        return cls(path.read_bytes(), tuple(p.read_bytes() for p in attempts), end, snapshot, raw_bytes)

    @classmethod
    def failed(cls, plan: EpisodePlan, run_id: str, error: str) -> EpisodeFiles:
        """An episode no worker could finish: recorded ``invalid`` (``infra_error``, the harness's:
        ``--resume`` runs it again), never lost."""
        end = EpisodeEnd(outcome="invalid", status="infra_error", error=error, invalid_cause="harness")
        lines = [start_event(plan, run_id).model_dump_json(), end.model_dump_json()]
        return cls("".join(f"{line}\n" for line in lines).encode(), (), end)

    def noted(self, note: str) -> EpisodeFiles:
        """The same episode with ``note`` added to its ``episode_end`` (the trajectory's last line)."""
        end = self.end.model_copy(update={"notes": [*self.end.notes, note]})
        head, _, _ = self.trajectory.rstrip(b"\n").rpartition(b"\n")
        trajectory = (head + b"\n" if head else b"") + end.model_dump_json().encode() + b"\n"
        return replace(self, trajectory=trajectory, end=end)

    def rebased(self, old: str, new: str) -> EpisodeFiles:
        """The same files with each mention of the path ``old`` (a worker's copy of the task's folder)
        made ``new`` (the folder on the submitter), so the trajectory reads as one run here would."""
        if old == new:
            return self
        source, target = old.encode(), new.encode()
        trajectory = self.trajectory.replace(source, target)
        attempts = tuple(a.replace(source, target) for a in self.attempts)
        end = EpisodeEnd.model_validate_json(trajectory.rstrip(b"\n").rpartition(b"\n")[2])
        return replace(self, trajectory=trajectory, attempts=attempts, end=end)

    def with_task_hash(self, value: str) -> EpisodeFiles:
        """The same files with ``episode_start.task_hash`` set to ``value`` (the hash of the task's
        files where they are named, which a worker holding a copy of them cannot compute)."""
        first, newline, rest = self.trajectory.partition(b"\n")
        start = json.loads(first)
        if start.get("task_hash") == value:
            return self
        start["task_hash"] = value
        return replace(
            self,
            trajectory=json.dumps(start, ensure_ascii=False, separators=(",", ":")).encode() + newline + rest,
        )

    def write(self, path: Path, keep: SnapshotTarget | None = None) -> EpisodeEnd:
        """Write the snapshot at ``keep.path``, the attempts beside ``path``
        (``<episode>.jsonl.attempt<N>``), then the trajectory, synced to disk (an episode counts as
        done once its trajectory is durable, as with the ``local`` executor)."""
        if keep is not None and self.snapshot is not None:
            try:
                keep.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise RunWriteError.of(keep.path.parent, exc) from exc
            _write_atomically(keep.path, self.snapshot)
        for number, data in enumerate(self.attempts, start=1):
            _write_atomically(path.with_name(f"{path.name}.attempt{number}"), data)
        if self.raw_events is not None:
            raw = raw_events_path(path)
            try:
                raw.parent.mkdir(exist_ok=True)
            except OSError as exc:
                raise RunWriteError.of(raw.parent, exc) from exc
            _write_atomically(raw, self.raw_events)
        _write_atomically(path, self.trajectory, durable=True)
        return self.end


def write_interrupted(plan: EpisodePlan, run_id: str, path: Path) -> None:
    """An episode the run stopped while it ran: its start line alone, read as interrupted (as the
    ``local`` executor leaves one), so ``--resume`` sets it aside and runs it again."""
    _write_atomically(path, f"{start_event(plan, run_id).model_dump_json()}\n".encode())


def _scratch_target(scratch: Path, plan: EpisodePlan, keep_bytes: int | None) -> SnapshotTarget | None:
    """Laid out as in a run directory, so the record names ``snapshots/<episode_id>.tar.gz``."""
    if keep_bytes is None:
        return None
    return SnapshotTarget(scratch / SNAPSHOTS / f"{plan.episode_id}.tar.gz", keep_bytes)


def _attempt_number(path: Path) -> int:
    match = ATTEMPT.search(path.name)
    return int(match.group(1)) if match else 0


def _write_atomically(path: Path, data: bytes, *, durable: bool = False) -> None:
    """Readers (``--resume``, ``show``, the explorer) see the whole file or none of it;
    ``RunWriteError`` when the run directory cannot take it."""
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        with tmp.open("wb") as handle:
            handle.write(data)
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
        tmp.replace(path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise RunWriteError.of(path, exc) from exc
