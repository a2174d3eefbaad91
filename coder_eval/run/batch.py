"""Run a batch of episodes: concurrency, a budget, resume, dialog trials in turn, on any executor.

Example::

    plans = plan_episodes(load_tasks([Path("tasks/examples")]), repeats=2)
    summary = asyncio.run(run_batch(plans, run_dir, run_id="r1", concurrency=4))
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Collection, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass, field

from coder_eval.episode.plan import EpisodePlan
from coder_eval.episode.runner import harness_invalid, start_event
from coder_eval.episode.salvage import salvage
from coder_eval.episode.snapshots import DEFAULT_MAX_BYTES, SnapshotTarget
from coder_eval.errors import ExecutorLost, RunWriteError
from coder_eval.executors.base import Executor
from coder_eval.executors.local import LocalExecutor
from coder_eval.run_dir import RunDir
from coder_eval.trajectory import DISK_SYNC, EpisodeEnd, EpisodeStart


@dataclass
class BatchSummary:
    """What a batch did: counts by outcome, spend, and whether a budget stopped it."""

    outcomes: dict[str, int] = field(default_factory=lambda: {"pass": 0, "fail": 0, "invalid": 0})
    cost_usd: float = 0.0
    skipped_done: int = 0
    budget_stopped: bool = False
    not_started: int = 0


async def run_batch(
    plans: Sequence[EpisodePlan],
    run: RunDir,
    *,
    run_id: str,
    concurrency: int = 1,
    resume: bool = False,
    max_cost_usd: float | None = None,
    on_done: Callable[[EpisodePlan, EpisodeEnd], None] | None = None,
    executor: Executor | None = None,
    snapshot_max_bytes: int | None = DEFAULT_MAX_BYTES,
    rerun: Collection[str] = (),
) -> BatchSummary:
    """Run ``plans`` into ``run``; with ``resume``, complete episodes are kept and the rest re-run
    (those the harness made ``invalid`` too, and the finished ones named in ``rerun``).
    Workspaces are kept in ``snapshots/`` up to ``snapshot_max_bytes`` each (None: none kept).

    ``executor`` runs each episode (default: the ``local`` executor, in this process); at most
    ``concurrency`` are in flight, so a budget stops new ones on any executor. An error that escapes
    an episode is recorded on it (``salvage.py``), so the other episodes go on; one that means the
    run cannot go on (the run directory cannot be written, the executor is gone) cancels the
    episodes in flight, starts no more, and is raised.
    """
    if executor is None:
        executor = LocalExecutor()
    summary = BatchSummary()
    todo = list(plans)
    if resume:
        done = kept_episodes(run, rerun)
        kept = [done[p.episode_id] for p in todo if p.episode_id in done]
        summary.skipped_done = len(kept)
        # a budget caps the run, not one session of it: what the kept episodes cost counts
        summary.cost_usd = sum(end.cost_usd or 0.0 for end in kept)
        todo = [p for p in todo if p.episode_id not in done]
        for plan in todo:
            run.set_aside(plan.episode_id)
    gate = asyncio.Semaphore(max(1, concurrency))
    in_turn: dict[tuple[str, str], asyncio.Lock] = {}  # trials of a dialog with parallel_trials: false

    async def one(plan: EpisodePlan) -> None:
        simulation = plan.task.simulation
        async with AsyncExitStack() as held:
            if simulation is not None and not simulation.parallel_trials:
                key = (plan.task.task_id, plan.variant_id)
                await held.enter_async_context(in_turn.setdefault(key, asyncio.Lock()))
            await held.enter_async_context(gate)
            if max_cost_usd is not None and summary.cost_usd >= max_cost_usd:
                summary.budget_stopped = True
                summary.not_started += 1
                return
            end = await _run_one(executor, plan, run, run_id, snapshot_max_bytes)
            summary.outcomes[end.outcome] += 1
            summary.cost_usd += end.cost_usd or 0.0
            if on_done is not None:
                on_done(plan, end)

    await _all_or_none([asyncio.ensure_future(one(plan)) for plan in todo])
    # the episodes' trajectories are on disk before anyone counts them (trajectory.DiskSync; after a
    # failure, the manifest's own write waits for them)
    await asyncio.to_thread(DISK_SYNC.wait)
    return summary


def kept_episodes(run: RunDir, rerun: Collection[str] = ()) -> dict[str, EpisodeEnd]:
    """The finished episodes ``--resume`` keeps: not those the harness made invalid, nor ``rerun``."""
    finished = run.finished_episodes()
    return {k: end for k, end in finished.items() if k not in rerun and not harness_invalid(end)}


async def _run_one(
    executor: Executor, plan: EpisodePlan, run: RunDir, run_id: str, snapshot_max_bytes: int | None
) -> EpisodeEnd:
    """One episode on ``executor``; whatever escapes it is recorded on it (``invalid``, the harness's)."""
    path = run.episode_path(plan.episode_id)
    try:
        return await executor.run(plan, run_id, path, _snapshot_target(run, plan, snapshot_max_bytes))
    except (RunWriteError, ExecutorLost):
        raise
    except Exception as exc:
        return await asyncio.to_thread(salvage, path, _start_or_minimal(plan, run_id), exc)


def _start_or_minimal(plan: EpisodePlan, run_id: str) -> EpisodeStart:
    """The episode's ``episode_start``, or its keys alone when even that cannot be made."""
    try:
        return start_event(plan, run_id)
    except Exception:
        return EpisodeStart(
            run_id=run_id,
            episode_id=plan.episode_id,
            task_id=plan.task.task_id,
            variant_id=plan.variant_id,
            repeat=plan.repeat,
            seed=plan.seed,
        )


async def _all_or_none(tasks: list[asyncio.Future[None]]) -> None:
    """Wait for every task; when one raises (or the wait is cancelled), cancel the rest, wait for them
    to stop (their sandboxes removed), and raise."""
    try:
        await asyncio.gather(*tasks)
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


def _snapshot_target(run: RunDir, plan: EpisodePlan, max_bytes: int | None) -> SnapshotTarget | None:
    return None if max_bytes is None else SnapshotTarget(run.snapshot_path(plan.episode_id), max_bytes)
