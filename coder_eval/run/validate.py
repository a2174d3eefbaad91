"""The grader self-test behind ``coder-eval validate``.

A task is sound when its reference solution passes every gating criterion (oracle agent) and doing
nothing fails at least one (none agent): graders that pass an empty run measure nothing.

Two cases are judged differently, because there doing nothing can be right or an oracle cannot act:

- a task without ``reference_solution`` (e.g. a row asking whether a skill triggers): the oracle
  is skipped and only the none agent runs;
- a row whose gating criteria are all classifications expecting the label ``none`` (a negative
  row): doing nothing is the correct answer, so the none agent may pass.

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

from coder_eval.agents import AGENTS
from coder_eval.criteria.classification_match import NONE_LABEL
from coder_eval.episode.plan import EpisodePlan
from coder_eval.episode.runner import run_episode
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


@dataclass(frozen=True)
class _Run:
    end: EpisodeEnd
    gating: list[CriterionResult]

    @property
    def failed(self) -> list[str]:
        return [c.criterion_id for c in self.gating if not c.passed]

    @property
    def expects_nothing(self) -> bool:
        """Every gating criterion is a classification whose expected label is ``none``."""
        return bool(self.gating) and all(c.expected_label == NONE_LABEL for c in self.gating)


async def _run(task: TaskSpec, kind: str, folder: Path) -> _Run:
    agent = AGENTS[kind].spec.model_validate({"type": kind, "model": task.agent.model})
    plan = EpisodePlan(task.model_copy(update={"agent": agent}), variant_id=kind)
    path = folder / f"{plan.episode_id}.jsonl"
    end = await run_episode(plan, "validate", path)
    events = read_trajectory(path).events
    return _Run(end, [e for e in events if isinstance(e, CriterionResult) and e.gating])


async def check_task(task: TaskSpec, folder: Path) -> TaskCheck:
    """Run ``task`` with the oracle (when it has a reference solution) and the none agent."""
    has_reference = task.reference_script is not None
    none = await _run(task, "none", folder)
    oracle = await _run(task, "oracle", folder) if has_reference else None
    verdict = _verdict(oracle, none)
    return TaskCheck(
        task.task_id,
        oracle.end.outcome if oracle else "skipped",
        none.end.outcome,
        verdict.startswith("ok"),
        verdict,
    )


def _verdict(oracle: _Run | None, none: _Run) -> str:
    if oracle is not None and oracle.end.outcome != "pass":
        reason = oracle.end.error or f"failed: {', '.join(oracle.failed)}"
        return f"broken: the reference solution does not pass ({reason})"
    if none.end.outcome == "invalid":
        return f"broken: invalid with the none agent ({none.end.error})"
    if none.end.outcome == "pass" and not none.expects_nothing:
        return "broken: passes when the agent does nothing"
    notes = []
    if oracle is None:
        notes.append("no reference solution, oracle skipped")
    if none.expects_nothing:
        notes.append("negative row: doing nothing is right")
    return "ok" + (f" ({'; '.join(notes)})" if notes else "")


async def validate_tasks(tasks: Sequence[TaskSpec], concurrency: int = 4) -> list[TaskCheck]:
    """Self-test every task, a few at a time."""
    gate = asyncio.Semaphore(concurrency)
    with tempfile.TemporaryDirectory(prefix="coder-eval-validate-") as folder:

        async def one(task: TaskSpec) -> TaskCheck:
            async with gate:
                return await check_task(task, Path(folder))

        return list(await asyncio.gather(*(one(t) for t in tasks)))
