"""What one episode is before it runs: a task, a variant and a repeat (``EpisodePlan``).

Example::

    plans = plan_episodes(load_tasks([Path("tasks/examples")]), repeats=2)
    plans[0].episode_id, plans[0].seed      # 'write_file--default--r0', a stable 32-bit seed
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from coder_eval.run_dir import episode_id
from coder_eval.task import TaskSpec


@dataclass(frozen=True)
class FrozenFiles:
    """The task's files as the run froze them when it was planned (``coder_eval.run.frozen``): what
    the episode runs is what ``task_hash`` hashed."""

    task_hash: str
    """The task's hash, from the frozen files: what ``episode_start`` records."""
    moves: tuple[tuple[str, str], ...] = ()
    """Each path the task names -> its frozen copy on this host (the ``local`` executor runs them)."""
    bundle_file: Path | None = None
    """The task's folder packed as a bundle, on this host (the ``dask`` executor sends it)."""


@dataclass(frozen=True)
class EpisodePlan:
    """One task × variant × repeat, with the resolved task and where each field came from."""

    task: TaskSpec
    variant_id: str = "default"
    repeat: int = 0
    provenance: dict[str, str] = field(default_factory=dict)
    bundle: str | None = None
    """The sha256 of the task's folder packed as a bundle, set by an executor that sends it to a
    worker with no view of the suite (``coder_eval.executors.dask.bundles``); None: the suite is here."""
    frozen: FrozenFiles | None = None
    """The task's files frozen for the run (None: they are read where the task names them)."""

    @property
    def episode_id(self) -> str:
        return episode_id(self.task.task_id, self.variant_id, self.repeat)

    @property
    def seed(self) -> int:
        """A stable 32-bit seed from the episode id: repeats differ, re-runs agree."""
        return int.from_bytes(hashlib.sha256(self.episode_id.encode()).digest()[:4], "big")


def plan_episodes(
    tasks: Sequence[TaskSpec], repeats: int = 1, variant_id: str = "default"
) -> list[EpisodePlan]:
    """Every (task, repeat) for one variant (a dialog's ``n_trials`` multiply the repeats); skipped
    tasks are left out."""
    return [EpisodePlan(t, variant_id, r) for t in tasks if not t.skip for r in range(repeats * t.trials)]
