"""The grader self-test behind ``coder-eval validate``.

A task is sound when its reference solution passes every gating criterion (oracle agent) and doing
nothing fails at least one (none agent): graders that pass an empty run measure nothing.

Example::

    rows = asyncio.run(validate_tasks(load_tasks([Path("tasks/examples")])))
    assert all(row.ok for row in rows)
"""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from coder_eval.runner import EpisodePlan, run_episode
from coder_eval.task import TaskSpec
from coder_eval.trajectory import CriterionResult, EpisodeEnd, read_trajectory


@dataclass(frozen=True)
class TaskCheck:
    """One task's self-test: the outcome with each agent, and the verdict."""

    task_id: str
    oracle: str
    none: str
    ok: bool
    verdict: str


async def _outcome(task: TaskSpec, kind: str, folder: Path) -> tuple[EpisodeEnd, list[str]]:
    agent = task.agent.model_copy(update={"kind": kind})
    plan = EpisodePlan(task.model_copy(update={"agent": agent}), variant_id=kind)
    path = folder / f"{plan.episode_id}.jsonl"
    end = await run_episode(plan, "validate", path)
    failed = [
        e.criterion_id
        for e in read_trajectory(path).events
        if isinstance(e, CriterionResult) and e.gating and not e.passed
    ]
    return end, failed


async def check_task(task: TaskSpec, folder: Path) -> TaskCheck:
    """Run ``task`` with the oracle and with the none agent, and judge its graders."""
    (oracle, oracle_failed), (none, _) = await asyncio.gather(
        _outcome(task, "oracle", folder), _outcome(task, "none", folder)
    )
    if oracle.outcome != "pass":
        reason = oracle.error or f"failed: {', '.join(oracle_failed)}"
        verdict = f"broken: the reference solution does not pass ({reason})"
    elif none.outcome == "pass":
        verdict = "broken: passes when the agent does nothing"
    elif none.outcome == "invalid":
        verdict = f"broken: invalid with the none agent ({none.error})"
    else:
        verdict = "ok"
    return TaskCheck(task.task_id, oracle.outcome, none.outcome, verdict == "ok", verdict)


async def validate_tasks(tasks: Sequence[TaskSpec], concurrency: int = 4) -> list[TaskCheck]:
    """Self-test every task, a few at a time."""
    gate = asyncio.Semaphore(concurrency)
    with tempfile.TemporaryDirectory(prefix="coder-eval-validate-") as folder:

        async def one(task: TaskSpec) -> TaskCheck:
            async with gate:
                return await check_task(task, Path(folder))

        return list(await asyncio.gather(*(one(t) for t in tasks)))
