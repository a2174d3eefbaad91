"""Execute a run's episodes: status in ``run.json``, the executor, the budget, the sandbox log, and
an interruption (Ctrl-C, SIGTERM, a write failure) that leaves the run ``interrupted`` for ``--resume``.

Example::

    summary = execute(run, manifest, plans, Batch(jobs=4, max_cost=2.0), Quiet())
    summary.budget_stopped, manifest.status, manifest.budget
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import signal
import threading
from collections.abc import Awaitable, Callable, Coroutine, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol

from coder_eval.episode.plan import EpisodePlan
from coder_eval.episode.snapshots import DEFAULT_MAX_MB, MB
from coder_eval.executors import ExecutorName, check_executor, open_executor
from coder_eval.executors.base import Executor
from coder_eval.manifest import BudgetRecord
from coder_eval.run.batch import BatchSummary, kept_episodes, run_batch
from coder_eval.run.stop import left_interrupted
from coder_eval.run_dir import RunDir, RunManifest
from coder_eval.sandbox.leftovers import recording_sandboxes
from coder_eval.trajectory import EpisodeEnd

SANDBOX_LOG_FILE = "sandboxes.jsonl"
"""In the run directory: every sandbox the run made (to reap them after a crash)."""


class Placement(NamedTuple):
    """Where the episodes run: the executor, and the scheduler of a running dask cluster."""

    executor: ExecutorName = "local"
    scheduler: str | None = None

    def check(self) -> Placement:
        """Fail (``InputError``, exit 2) before anything is resolved or run when the executor is
        unknown, its extra is missing, or no dask scheduler answers."""
        check_executor(self.executor, self.scheduler)
        return self


@dataclass(frozen=True)
class Batch:
    """How a run executes its episodes (``snapshot_max_mb`` None: no snapshots kept; ``rerun``:
    finished episodes a resume runs again)."""

    jobs: int = 1
    max_cost: float | None = None
    snapshot_max_mb: float | None = DEFAULT_MAX_MB
    placement: Placement = field(default_factory=Placement)
    resume: bool = False
    rerun: frozenset[str] = field(default_factory=frozenset)


Drive = Callable[[Executor], Awaitable[BatchSummary]]
"""What runs the episodes on the open executor instead of one batch of them all (the
``--until-conclusive`` scheduler, ``coder_eval.run.adaptive``)."""


class Progress(Protocol):
    """What a run tells as its episodes go (the command line draws a bar); ``Quiet`` tells nothing."""

    def started(self, total: int, done: int, tampered: Sequence[str]) -> None:
        """``total`` planned, ``done`` of them kept from before; ``tampered``: episodes set aside."""

    def dashboard(self, url: str) -> None:
        """Where to watch the episodes run (the dask dashboard)."""

    def episode_done(self, plan: EpisodePlan, end: EpisodeEnd) -> None:
        """One episode finished."""


class Quiet:
    """A ``Progress`` that tells nothing."""

    def started(self, total: int, done: int, tampered: Sequence[str]) -> None:
        pass

    def dashboard(self, url: str) -> None:
        pass

    def episode_done(self, plan: EpisodePlan, end: EpisodeEnd) -> None:
        pass


def execute(
    run: RunDir,
    manifest: RunManifest,
    plans: list[EpisodePlan],
    batch_of: Batch,
    progress: Progress,
    drive: Drive | None = None,
) -> BatchSummary:
    """Run ``plans`` into ``run`` (or let ``drive`` run them) and record the status (and budget)
    in its manifest. Called from a thread with a running event loop (a notebook), the episodes run
    on a thread of their own."""
    cap_mb = batch_of.snapshot_max_mb
    done = (
        len(kept_episodes(run, batch_of.rerun).keys() & {p.episode_id for p in plans})
        if batch_of.resume
        else 0
    )
    progress.started(len(plans), done, list(run.tampered))
    manifest.status = "running"
    run.write_manifest(manifest)
    with (
        left_interrupted(run, manifest),
        _sigterm_as_interrupt(),
        recording_sandboxes(run.path / SANDBOX_LOG_FILE),
    ):
        summary = _run_to_end(_on_executor(run, manifest.run_id, plans, batch_of, progress, drive))
    manifest.snapshots = run.snapshot_totals(cap_mb)
    _record_status(run, manifest, summary, batch_of.max_cost)
    return summary


def _run_to_end(batch: Coroutine[Any, Any, BatchSummary]) -> BatchSummary:
    """``asyncio.run`` the batch, on a thread of its own when this one already runs an event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(batch)
    context = contextvars.copy_context()  # the sandbox log is a context variable
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(context.run, asyncio.run, batch).result()


async def _on_executor(
    run: RunDir,
    run_id: str,
    plans: list[EpisodePlan],
    batch_of: Batch,
    progress: Progress,
    drive: Drive | None = None,
) -> BatchSummary:
    """Start the executor (a dask LocalCluster has ``jobs`` workers), run the batch on it, stop it."""
    placement, cap_mb = batch_of.placement, batch_of.snapshot_max_mb
    async with open_executor(
        placement.executor, slots=batch_of.jobs, scheduler=placement.scheduler
    ) as executor:
        await executor.admit(plans)
        if executor.dashboard:
            progress.dashboard(executor.dashboard)
        if drive is not None:
            return await drive(executor)
        return await run_batch(
            plans,
            run,
            run_id=run_id,
            concurrency=batch_of.jobs,
            resume=batch_of.resume,
            max_cost_usd=batch_of.max_cost,
            on_done=progress.episode_done,
            executor=executor,
            snapshot_max_bytes=int(cap_mb * MB) if cap_mb is not None else None,
            rerun=batch_of.rerun,
        )


@contextlib.contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM (how CI systems cancel a job) stops the run the way Ctrl-C does: running episodes are
    cancelled and their processes killed, the manifest says ``interrupted``, and ``--resume`` goes on.
    Only the main thread can set a signal handler; elsewhere SIGTERM keeps its own.

    A run started in the background by a script (``coder-eval run ... &`` in a shell without job
    control) inherits SIGINT ignored. SIGTERM goes through SIGINT, so SIGINT is given its default
    handler back for the run: otherwise such a run would ignore SIGTERM too, and a cancelled CI job
    would run on until it is killed, leaving the run without its ``interrupted`` status."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    ignored = signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    if ignored:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    previous = signal.signal(signal.SIGTERM, lambda *_: signal.raise_signal(signal.SIGINT))
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
        if ignored:
            signal.signal(signal.SIGINT, signal.SIG_IGN)


def _record_status(run: RunDir, manifest: RunManifest, summary: BatchSummary, max_cost: float | None) -> None:
    manifest.status = "budget_stopped" if summary.budget_stopped else "completed"
    if max_cost is not None:
        manifest.budget = BudgetRecord(
            max_cost_usd=max_cost,
            spent_usd=round(summary.cost_usd, 6),
            stopped=summary.budget_stopped,
            not_started=summary.not_started,
        )
    run.write_manifest(manifest)
