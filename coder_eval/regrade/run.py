"""A finished run re-graded into a new run, no agent run again (``coder-eval regrade``).

Example::

    result = asyncio.run(regrade_run(Path("runs/latest"), Path("runs/stricter"), [Path("tasks/demo")]))
    result.record.changed, result.record.outcomes_after      # 3, {'pass': 40, 'fail': 8, 'invalid': 0}

Everything that can be checked is checked before the new run directory exists: the source run, the
task files, and that every recorded task still reads (or has a task file). The new run's manifest
copies the source's plan (experiment, variants, tasks, episodes) and records ``regraded_from``:
where it came from and what changed. It has no run inputs, so ``coder-eval run --resume`` refuses it.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from coder_eval.episode.runner import versions
from coder_eval.errors import InputError
from coder_eval.regrade.episode import Recorded, Regraded, regrade_episode
from coder_eval.regrade.tasks import TaskDefinitions
from coder_eval.run.session import RunSession
from coder_eval.run_dir import RegradeRecord, RunDir, RunManifest
from coder_eval.trajectory import now, read_trajectory


@dataclass(frozen=True)
class RegradeResult:
    """The new run, its summary (also in its ``run.json``), each episode, and what was skipped."""

    run: RunDir
    record: RegradeRecord
    episodes: list[Regraded]
    problems: list[str]


@dataclass(frozen=True)
class _Plan:
    source: RunDir
    manifest: RunManifest
    recorded: list[Recorded]
    problems: list[str]


def plan_regrade(source_dir: Path, target: Path, task_files: Sequence[Path] = ()) -> _Plan:
    """Every check before anything is written (``InputError`` naming what to fix)."""
    if target.exists():
        raise InputError(f"{target} already exists; choose a new --run-dir for the re-graded run")
    source = RunDir.open(source_dir)
    manifest = source.read_manifest()
    definitions = TaskDefinitions.load(task_files)
    recorded: list[Recorded] = []
    problems: list[str] = []
    for path in source.trajectory_paths():
        trajectory = read_trajectory(path)
        if trajectory.start is None:
            problems.append(f"{path.name}: no episode_start, so it is not re-graded")
            continue
        recorded.append(Recorded(trajectory, definitions.for_episode(trajectory.start)))
    if not recorded:
        raise InputError(f"{source_dir}: no trajectories in episodes/; nothing to re-grade")
    unused = definitions.unused({r.start.task_id for r in recorded})
    problems += [
        f"task {task_id!r} of the given task files ran in no episode of the run" for task_id in unused
    ]
    return _Plan(source, manifest, recorded, problems)


async def regrade_run(
    source_dir: Path,
    target: Path,
    task_files: Sequence[Path] = (),
    *,
    concurrency: int = 1,
    command: Sequence[str] = (),
    on_done: Callable[[Regraded], None] | None = None,
) -> RegradeResult:
    """Re-grade every episode of the run at ``source_dir`` into a new run at ``target``."""
    started = time.monotonic()
    plan = plan_regrade(source_dir, target, task_files)
    record = RegradeRecord(
        run_id=plan.manifest.run_id, run_dir=str(plan.source.path), task_files=[str(p) for p in task_files]
    )
    manifest = _new_manifest(plan.manifest, target.name, command, record)
    with RunSession.derive(manifest, target) as session:  # locked: one writer at a time
        max_mb = plan.manifest.snapshots.max_mb if plan.manifest.snapshots else None
        with session.running(max_mb) as run:
            episodes = await _regrade_all(plan, run, manifest.run_id, concurrency, on_done)
            manifest.regraded_from = _summary(record, episodes, time.monotonic() - started)
            if manifest.adaptive is not None:  # a run that stopped at its answer: decided again
                from coder_eval.run.adaptive_replay import redecide

                manifest.adaptive = redecide(manifest.adaptive, manifest.episodes, run.finished_episodes())
    return RegradeResult(run, manifest.regraded_from, episodes, plan.problems)


async def _regrade_all(
    plan: _Plan, run: RunDir, run_id: str, concurrency: int, on_done: Callable[[Regraded], None] | None
) -> list[Regraded]:
    gate = asyncio.Semaphore(max(1, concurrency))

    async def one(recorded: Recorded) -> Regraded:
        async with gate:
            regraded = await regrade_episode(recorded, plan.source, run, run_id)
        if on_done is not None:
            on_done(regraded)
        return regraded

    return list(await asyncio.gather(*(one(r) for r in plan.recorded)))


def _new_manifest(
    source: RunManifest, run_id: str, command: Sequence[str], record: RegradeRecord
) -> RunManifest:
    """The source's plan under a new id; its experiment record kept (the compare report reads it)."""
    return source.model_copy(
        update={
            "run_id": run_id,
            "created_at": now(),
            "status": "running",
            "command": list(command),
            "versions": versions(),
            "snapshots": None,
            "regraded_from": record,
            "inputs": None,
            "budget": None,
            "gates": None,
            "headline": None,
            "extra": {},
        }
    )


def _summary(record: RegradeRecord, episodes: Sequence[Regraded], seconds: float) -> RegradeRecord:
    costs = [e.evaluation_cost_usd for e in episodes]
    return record.model_copy(
        update={
            "episodes": len(episodes),
            "changed": sum(e.before != e.after.outcome for e in episodes),
            "outcomes_before": dict(Counter(e.before for e in episodes)),
            "outcomes_after": dict(Counter(e.after.outcome for e in episodes)),
            "criteria_kept": sum(len(e.kept) for e in episodes),
            "criteria_not_regraded": sum(len(e.not_regraded) for e in episodes),
            "evaluation_cost_usd": None if None in costs else sum(c for c in costs if c is not None),
            "seconds": seconds,
        }
    )
