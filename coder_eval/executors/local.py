"""The ``local`` executor: episodes run in this process's event loop (``-j N`` of them at once).

Example::

    async with open_local() as executor:
        end = await executor.run(plan, "run-1", Path("runs/r/episodes/t--default--r0.jsonl"))
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path

from coder_eval.agents.raw_events import raw_events_enabled, raw_events_path
from coder_eval.episode.plan import EpisodePlan
from coder_eval.episode.runner import run_episode
from coder_eval.episode.snapshots import SnapshotTarget
from coder_eval.executors.dask.bundles import relocated
from coder_eval.trajectory import EpisodeEnd


class LocalExecutor:
    """``run_episode`` itself: the trajectory is written at ``path`` as the episode goes, the snapshot
    straight into the run directory (and, with ``CODER_EVAL_RAW_SDK_LOG`` set, the raw event log). A
    plan whose task files were frozen (``coder_eval.run.frozen``) runs from the frozen copies, and its
    trajectory names them where the task does."""

    dashboard: str | None = None

    async def admit(self, plans: Sequence[EpisodePlan]) -> None:
        """Nothing to check: the episodes run here, where their tasks were loaded."""

    async def run(
        self, plan: EpisodePlan, run_id: str, path: Path, keep: SnapshotTarget | None = None
    ) -> EpisodeEnd:
        raw = raw_events_path(path) if raw_events_enabled() else None
        if plan.frozen is None or not plan.frozen.moves:
            return await run_episode(plan, run_id, path, keep=keep, raw_events=raw)
        moves = dict(plan.frozen.moves)
        renamed = [(copy, named) for named, copy in moves.items()]
        here = relocated(plan, moves)
        return await run_episode(here, run_id, path, keep=keep, raw_events=raw, renamed=renamed)


@asynccontextmanager
async def open_local(slots: int = 1, scheduler: str | None = None) -> AsyncIterator[LocalExecutor]:
    """Nothing to start or stop: the local executor is this process (``slots`` is the batch's
    concurrency, set there; a scheduler is refused by ``check_executor``)."""
    yield LocalExecutor()
