"""Run episodes: ``run_episode`` is a recipe of named steps; ``run_batch`` adds concurrency and resume.

Example::

    plans = plan_episodes(load_tasks([Path("tasks/examples")]), repeats=2)
    summary = asyncio.run(run_batch(plans, run_dir, concurrency=4))
"""

from __future__ import annotations

import asyncio
import hashlib
import platform
import time
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from coder_eval import __version__
from coder_eval.agents import AgentRequest, AgentResult, ModelEndpoint, make_agent
from coder_eval.errors import CoderEvalError
from coder_eval.grading import episode_outcome, episode_score, evaluate_criteria
from coder_eval.pricing import cost_usd
from coder_eval.run_dir import RunDir, episode_id
from coder_eval.sandbox import make_sandbox
from coder_eval.sandbox.base import Sandbox
from coder_eval.simulation import DIALOG_AGENTS, Simulator, open_simulation
from coder_eval.task import TaskSpec
from coder_eval.trajectory import (
    CriterionResult,
    EpisodeEnd,
    EpisodeStart,
    Message,
    Timings,
    TrajectoryWriter,
    Usage,
)


@dataclass(frozen=True)
class EpisodePlan:
    """One task × variant × repeat, with the resolved task and where each field came from."""

    task: TaskSpec
    variant_id: str = "default"
    repeat: int = 0
    provenance: dict[str, str] = field(default_factory=dict)

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
    """Every (task, repeat) for one variant; skipped tasks are left out."""
    return [EpisodePlan(t, variant_id, r) for t in tasks if not t.skip for r in range(repeats)]


def versions() -> dict[str, str]:
    return {"coder_eval": __version__, "python": platform.python_version()}


async def run_episode(plan: EpisodePlan, run_id: str, path: Path) -> EpisodeEnd:
    """Run one episode and write its trajectory to ``path``; never raises for agent or grader faults."""
    with TrajectoryWriter(path) as sink:
        sink.write(_start_event(plan, run_id))
        clock = _Clock()
        sandbox: Sandbox | None = None
        try:
            sandbox, prepared = await _set_up(plan.task)
            clock.lap("setup")
            result = await _run_agent(plan, sandbox, prepared, sink)
            await sandbox.stop_processes()  # nothing the agent started may run on while graders read
            clock.lap("agent")
            results = [] if result.invalid else await _grade(plan, sandbox, prepared, sink, result)
            clock.lap("grade")
            end = _end_event(plan.task, result, results, clock.timings())
        except Exception as exc:  # the harness failed, not the agent: record it and let the batch go on
            clock.lap("setup" if sandbox is None else "grade")
            error = str(exc) if isinstance(exc, CoderEvalError) else f"{type(exc).__name__}: {exc}"
            end = EpisodeEnd(outcome="invalid", status="infra_error", error=error, timings=clock.timings())
        finally:
            if sandbox is not None:
                await sandbox.close()
        end.timings.total_s = clock.elapsed()  # sandbox removal included
        sink.write(end)
    return end


def _start_event(plan: EpisodePlan, run_id: str) -> EpisodeStart:
    task = plan.task
    return EpisodeStart(
        run_id=run_id,
        episode_id=plan.episode_id,
        task_id=task.task_id,
        variant_id=plan.variant_id,
        repeat=plan.repeat,
        seed=plan.seed,
        tags=task.tags,
        agent=task.agent.model_dump(mode="json"),
        task=task.model_dump(mode="json", exclude={"reference_solution", "hidden_tests"}),
        provenance=plan.provenance,
        dataset_row=task.dataset_row,
        versions=versions(),
        scripted=task.agent.model == "scripted",
    )


async def _set_up(task: TaskSpec) -> tuple[Sandbox, list[Any]]:
    sandbox = await make_sandbox(task.sandbox)
    try:
        for command in task.pre_run:
            result = await sandbox.exec(command, timeout=600)
            if result.exit_code != 0:
                raise CoderEvalError(f"pre_run {command!r} exited {result.exit_code}: {result.output[-500:]}")
        prepared = [await criterion.prepare(sandbox) for criterion in task.success_criteria]
    except BaseException:
        await sandbox.close()
        raise
    return sandbox, prepared


async def _run_agent(
    plan: EpisodePlan, sandbox: Sandbox, prepared: list[Any], sink: TrajectoryWriter
) -> AgentResult:
    """The agent under the task timeout; a scripted model (and a simulated user, for a dialog task)
    is served for the episode's lifetime."""
    task = plan.task
    with ExitStack() as stack:
        endpoint = _scripted_endpoint(task, plan.seed, stack)
        conversation = _simulated_user(plan, sandbox, prepared, sink, stack)
        request = AgentRequest(task.prompt, sandbox, task, plan.episode_id, plan.seed, endpoint, conversation)
        agent = make_agent(task.agent.kind)
        try:
            result = await asyncio.wait_for(agent.run(request, sink), timeout=task.run_limits.task_timeout)
        except TimeoutError:
            return _timed_out(task, sink)
    return _apply_budgets(task, result)


def _timed_out(task: TaskSpec, sink: TrajectoryWriter) -> AgentResult:
    """The agent was cut off: keep what its recorded messages say it used."""
    messages = [e for e in sink.events if isinstance(e, Message) and e.role == "assistant"]
    usage = sum((m.usage for m in messages if m.usage is not None), Usage())
    models = {m.model for m in messages if m.model}
    cost = cost_usd(models.pop(), usage) if len(models) == 1 and usage.total else None
    error = f"task_timeout of {task.run_limits.task_timeout:g} s reached"
    return AgentResult(status="timeout", error=error, usage=usage, cost_usd=cost, num_turns=len(messages))


def _scripted_endpoint(task: TaskSpec, seed: int, stack: ExitStack) -> ModelEndpoint | None:
    if task.agent.model != "scripted":
        return None
    from coder_eval.scripted import ScriptedServer, load_script

    if task.scripted is None:
        raise CoderEvalError(
            f"task {task.task_id!r}: agent.model is 'scripted' but the task has no 'scripted' block"
        )
    script = load_script(task.scripted, base_dir=task.source_dir)
    server = stack.enter_context(ScriptedServer(script, seed=seed))
    return ModelEndpoint(server.base_url)


def _simulated_user(
    plan: EpisodePlan, sandbox: Sandbox, prepared: list[Any], sink: TrajectoryWriter, stack: ExitStack
) -> Simulator | None:
    """The task's simulated user; with ``every_turn`` it checks the criteria after each agent reply."""
    spec = plan.task.simulation
    if spec is None or plan.task.agent.kind not in DIALOG_AGENTS:
        return None

    async def check(reply: str) -> list[CriterionResult]:
        return await _evaluate(plan, sandbox, prepared, list(sink.events), reply)

    every_turn = spec.check_criteria == "every_turn"
    return open_simulation(
        spec,
        plan.task.prompt,
        task_dir=plan.task.source_dir,
        seed=plan.seed,
        stack=stack,
        check=check if every_turn else None,
    )


def _apply_budgets(task: TaskSpec, result: AgentResult) -> AgentResult:
    limits = task.run_limits
    if result.status != "completed" or result.invalid:
        return result
    if limits.max_total_tokens is not None and result.usage.total > limits.max_total_tokens:
        result.status, result.error = (
            "budget_exceeded",
            f"used {result.usage.total} tokens > max_total_tokens",
        )
    elif limits.max_usd is not None and (result.cost_usd or 0) > limits.max_usd:
        result.status, result.error = "budget_exceeded", f"cost ${result.cost_usd:.4f} > max_usd"
    return result


async def _grade(
    plan: EpisodePlan, sandbox: Sandbox, prepared: list[Any], sink: TrajectoryWriter, result: AgentResult
) -> list[CriterionResult]:
    for command in plan.task.post_run:
        await sandbox.exec(command, timeout=600)
    results = await _evaluate(plan, sandbox, prepared, list(sink.events), result.final_message)
    for event in results:
        sink.write(event)
    return results


async def _evaluate(
    plan: EpisodePlan, sandbox: Sandbox, prepared: list[Any], events: list[Any], final_message: str | None
) -> list[CriterionResult]:
    return await evaluate_criteria(plan.task, sandbox, prepared, events, final_message, plan.seed)


def _end_event(
    task: TaskSpec, result: AgentResult, results: list[CriterionResult], timings: Timings
) -> EpisodeEnd:
    outcome, status, error = episode_outcome(result, results)
    return EpisodeEnd(
        outcome=outcome,
        status=status,
        score=episode_score(results),
        timings=timings,
        usage=result.usage,
        cost_usd=result.cost_usd,
        num_turns=result.num_turns,
        duration_api_s=result.duration_api_s,
        error=error,
        agent_versions=result.versions,
    )


class _Clock:
    def __init__(self) -> None:
        self.start = self.mark = time.monotonic()
        self.laps: dict[str, float] = {}

    def lap(self, name: str) -> None:
        now = time.monotonic()
        self.laps[name] = self.laps.get(name, 0.0) + now - self.mark
        self.mark = now

    def elapsed(self) -> float:
        return time.monotonic() - self.start

    def timings(self) -> Timings:
        return Timings(
            setup_s=self.laps.get("setup", 0.0),
            agent_s=self.laps.get("agent", 0.0),
            grade_s=self.laps.get("grade", 0.0),
            total_s=time.monotonic() - self.start,
        )


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
) -> BatchSummary:
    """Run ``plans`` into ``run``; with ``resume``, complete episodes are kept and the rest re-run."""
    summary = BatchSummary()
    todo = list(plans)
    if resume:
        done = run.finished_episodes()
        kept = [done[p.episode_id] for p in todo if p.episode_id in done]
        summary.skipped_done = len(kept)
        # a budget caps the run, not one session of it: what the kept episodes cost counts
        summary.cost_usd = sum(end.cost_usd or 0.0 for end in kept)
        todo = [p for p in todo if p.episode_id not in done]
        for plan in todo:
            run.set_aside(plan.episode_id)
    gate = asyncio.Semaphore(max(1, concurrency))

    async def one(plan: EpisodePlan) -> None:
        async with gate:
            if max_cost_usd is not None and summary.cost_usd >= max_cost_usd:
                summary.budget_stopped = True
                summary.not_started += 1
                return
            end = await run_episode(plan, run_id, run.episode_path(plan.episode_id))
            summary.outcomes[end.outcome] += 1
            summary.cost_usd += end.cost_usd or 0.0
            if on_done is not None:
                on_done(plan, end)

    await asyncio.gather(*(one(plan) for plan in todo))
    return summary
