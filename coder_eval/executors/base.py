"""The executor seam: where an episode runs, and how its trajectory gets into the run directory.

Example::

    async with open_executor("dask", slots=4) as executor:
        end = await executor.run(plan, run_id, run.episode_path(plan.episode_id), keep=None)

``run_batch`` decides *which* episode starts *when* (concurrency, budget, resume, dialog trials in
turn); an executor only runs the one it is handed and leaves its complete trajectory at ``path`` (and
its workspace snapshot at ``keep.path``, when asked to keep one).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from coder_eval.episode.plan import EpisodePlan
    from coder_eval.episode.snapshots import SnapshotTarget
    from coder_eval.trajectory import EpisodeEnd


class Executor(Protocol):
    """Runs episodes somewhere: in this process (``local``) or on a dask cluster (``dask``)."""

    @property
    def dashboard(self) -> str | None:
        """Where to watch the episodes run (the Dask dashboard), when there is such a page."""
        ...

    async def admit(self, plans: Sequence[EpisodePlan]) -> None:
        """Refuse (``InputError``) before any episode starts a run this executor cannot run: on a
        dask cluster, a task whose files cannot travel or a worker that lacks what the run needs."""
        ...

    async def run(
        self, plan: EpisodePlan, run_id: str, path: Path, keep: SnapshotTarget | None = None
    ) -> EpisodeEnd:
        """Run one episode; when this returns, ``path`` holds its complete trajectory (any failed
        provider attempts lie beside it as ``<episode>.jsonl.attempt<N>``) and, with ``keep``, the
        final workspace is kept at ``keep.path`` unless the episode's record says why not."""
        ...
