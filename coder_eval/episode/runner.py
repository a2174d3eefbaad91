"""Run one episode: ``run_episode`` is a recipe of named steps (``coder_eval.run.batch`` runs many).

Example::

    (task,) = load_tasks([Path("tasks/examples/write_file.yaml")])
    end = asyncio.run(run_episode(EpisodePlan(task), "run-1", Path("episode.jsonl")))
"""

from __future__ import annotations

import asyncio
import platform
import re
import time
from collections.abc import Sequence
from contextlib import AsyncExitStack, ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from coder_eval.agents import AgentResult
from coder_eval.agents.raw_events import RawEventLog, raw_log
from coder_eval.episode.agent_phase import Turn, apply_budgets, at_limit, limits_hit, run_agent
from coder_eval.episode.grading import episode_outcome, episode_score, evaluate_criteria, invalid_cause
from coder_eval.episode.iterations import (
    Grade,
    armed_criteria,
    armed_outcome,
)
from coder_eval.episode.plan import EpisodePlan
from coder_eval.episode.record import settle_on_record, unpriced
from coder_eval.episode.skill_record import skill_load
from coder_eval.episode.snapshots import SnapshotTarget, keep_snapshot, take_snapshot
from coder_eval.episode.stage import ScriptedProvider, Stage, close_quietly, open_stage
from coder_eval.episode.verifier import open_verifier
from coder_eval.errors import CoderEvalError, RunWriteError
from coder_eval.sandbox.snapshot import WorkspaceTooLarge
from coder_eval.task import TaskSpec
from coder_eval.task.files import task_hash
from coder_eval.task.schema import HIDDEN_FIELDS
from coder_eval.trajectory import (
    CriterionResult,
    EpisodeEnd,
    EpisodeStart,
    Phase,
    PhaseEvent,
    Timings,
    TrajectoryWriter,
    WorkspaceSnapshot,
)
from coder_eval.version import __version__


def versions() -> dict[str, str]:
    return {"coder_eval": __version__, "python": platform.python_version()}


async def run_episode(
    plan: EpisodePlan,
    run_id: str,
    path: Path,
    *,
    keep: SnapshotTarget | None = None,
    durable: bool = True,
    raw_events: Path | None = None,
    renamed: Sequence[tuple[str, str]] = (),
) -> EpisodeEnd:
    """Run one episode and write its trajectory to ``path``; never raises for agent or grader faults.
    The workspace is kept at ``keep`` when given (``snapshots.py``); the trajectory is synced to disk
    as it closes unless ``durable`` is False (a worker's scratch copy, written durably elsewhere);
    every raw event the agent's CLI emits is logged at ``raw_events`` when given
    (``coder_eval.agents.raw_events``); ``renamed``: paths the trajectory names as the task does (the
    plan runs from frozen copies).

    A provider failure a retry can fix (rate limit, overload, a 5xx) is retried as the task's
    ``retry`` block says: each failed attempt's trajectory is kept beside ``path`` as
    ``<episode>.jsonl.attempt<N>``, and the last attempt's is the episode's.
    """
    retry = plan.task.retry
    delay = retry.initial_delay
    with ExitStack() as servers:
        provider = ScriptedProvider(plan.task, plan.seed, servers)
        raw = servers.enter_context(raw_log(raw_events))
        for attempt in range(1, retry.max_retries + 2):
            if raw is not None and attempt > 1:
                raw.note(f"attempt {attempt}")
            end = await _attempt(plan, provider, run_id, path, keep, durable, raw, renamed)
            if attempt > retry.max_retries or not retryable(end):
                break
            try:
                path.replace(path.with_name(f"{path.name}.attempt{attempt}"))
            except OSError as exc:
                raise RunWriteError.of(path, exc) from exc
            await asyncio.sleep(delay)
            delay *= retry.backoff_multiplier
    return end


RETRYABLE = re.compile(
    r"\b(408|429|5\d\d)\b|rate.?limit|overload|provider unavailable|no answer|connection", re.IGNORECASE
)
"""A provider error worth another attempt (a wrong key or a bad request is not)."""


def retryable(end: EpisodeEnd) -> bool:
    """The episode was not measured because the provider failed, as the harness saw it, in a way that
    can pass (never on the agent's word: ``invalid_cause`` is ``provider`` only on the endpoint's record)."""
    return (
        end.outcome == "invalid"
        and end.invalid_cause == "provider"
        and end.status == "infra_error"
        and bool(RETRYABLE.search(end.error or ""))
    )


async def _attempt(
    plan: EpisodePlan,
    provider: ScriptedProvider,
    run_id: str,
    path: Path,
    keep: SnapshotTarget | None,
    durable: bool = True,
    raw: RawEventLog | None = None,
    renamed: Sequence[tuple[str, str]] = (),
) -> EpisodeEnd:
    """One attempt at the episode: the phases below.

    Phases: ``setup`` (the agent's sandbox) -> ``agent`` -> ``stop`` (everything the agent started is
    killed; the workspace is snapshotted, and kept at ``keep`` when given) -> ``verify`` (a fresh
    sandbox from the snapshot, graders) -> ``end`` (sandboxes removed). Each is marked in the
    trajectory and timed in ``episode_end``.
    """
    with TrajectoryWriter(path, durable=durable, renamed=renamed) as sink:
        sink.write(start_event(plan, run_id))
        phases = _Phases(sink)
        notes: list[str] = []
        async with AsyncExitStack() as stack:
            try:
                end = await _phases(plan, provider, sink, stack, phases, notes, keep, raw)
            except RunWriteError:  # not the episode's fault: it is left unfinished, --resume runs it
                raise
            except Exception as exc:  # the harness failed, not the agent: record it and let the batch go on
                error = str(exc) if isinstance(exc, CoderEvalError) else f"{type(exc).__name__}: {exc}"
                end = EpisodeEnd(
                    outcome="invalid", status="infra_error", error=error, invalid_cause="harness"
                )
            phases.enter("end")
        end.notes = [*notes, *phases.leftovers]
        end.timings = phases.timings()
        sink.write(end)
    return end


async def _phases(
    plan: EpisodePlan,
    provider: ScriptedProvider,
    sink: TrajectoryWriter,
    stack: AsyncExitStack,
    phases: _Phases,
    notes: list[str],
    keep: SnapshotTarget | None = None,
    raw: RawEventLog | None = None,
) -> EpisodeEnd:
    phases.enter("setup")
    stage = await open_stage(plan.task, provider, sink, stack)
    phases.leftovers = stage.leftovers
    phases.enter("agent", stage.paths)
    turn = Turn(plan.episode_id, plan.seed, _grade_now(plan, stage, sink), raw)
    result = await run_agent(plan.task, stage, sink, turn)
    notes.extend(stage.notes)
    phases.enter("stop")
    await stage.sandbox.stop()
    settled = settle_on_record(plan.task, stage.vantage, stage.confined, sink, result)
    result = apply_budgets(plan.task.run_limits, unpriced(plan.task, notes, settled.result))
    hits = limits_hit(result, plan.task.sandbox.limits, stage.sandbox.limits_hit())
    if hits:
        result = at_limit(result, plan.task.sandbox.limits, hits)
    try:
        snapshot = stack.enter_context(await take_snapshot(stage.sandbox))
    except WorkspaceTooLarge as exc:
        end = workspace_too_large(result, exc, plan.task)
        end.record = settled.record
        return end
    kept = None
    if keep is not None and not result.invalid:  # an episode that measured nothing is never re-graded
        kept = await _keep_snapshot(snapshot, keep, plan.task, notes)
    phases.enter("verify")
    results: list[CriterionResult] = []
    if not result.invalid:
        results = await verify(plan, stage, snapshot, settled.grading_events, result.final_message, notes)
        for event in results:
            sink.write(event)
    end = end_event(result, results, plan.task)
    end.snapshot, end.record = kept, settled.record
    if plan.task.agent.CAPABILITIES.talks_to_model:  # they load skills: what was offered and loaded
        end.skills = skill_load(stage.plugins, sink.events)
    return end


def workspace_too_large(result: AgentResult, exc: WorkspaceTooLarge, task: TaskSpec) -> EpisodeEnd:
    """The workspace passed ``max_workspace_mb`` or ``max_workspace_files``: nothing is graded, and
    the agent failed with status ``resource_limit`` (an agent that was not measured stays ``invalid``)."""
    if not result.invalid:
        result.status, result.error = "resource_limit", str(exc)
    end = end_event(result, [], task)
    if not result.invalid:
        end.outcome = "fail"  # no criterion ran, so none passed
    return end


async def _keep_snapshot(
    snapshot: IO[bytes], keep: SnapshotTarget, task: TaskSpec, notes: list[str]
) -> WorkspaceSnapshot:
    """Keep the workspace in the run directory (ignore patterns honoured, under the cap)."""
    kept = await asyncio.to_thread(keep_snapshot, snapshot, keep, task.sandbox.ignore_patterns)
    if kept.note:
        notes.append(kept.note)
    return kept


@dataclass(frozen=True)
class BeforeAgent:
    """What grading needs from before the agent ran: each criterion's prepared state, the task's
    pytest configuration, where the agent ran (its paths), and where to note sandboxes left behind."""

    prepared: list[Any]
    pytest_config: tuple[str, bytes] | None
    agent_paths: dict[str, str]
    leftovers: list[str] = field(default_factory=list)


async def verify(
    plan: EpisodePlan,
    stage: Stage,
    snapshot: IO[bytes],
    events: list[Any],
    final_message: str | None,
    notes: list[str],
) -> list[CriterionResult]:
    """Grade in a fresh verifier seeded from ``snapshot``; post_run runs there first."""
    before = BeforeAgent(stage.prepared, stage.pytest_config, stage.paths, stage.leftovers)
    return await verify_snapshot(plan, before, snapshot, events, final_message, notes)


async def verify_snapshot(
    plan: EpisodePlan,
    before: BeforeAgent,
    snapshot: Path | IO[bytes],
    events: list[Any],
    final_message: str | None,
    notes: list[str],
) -> list[CriterionResult]:
    """The verify phase on a workspace ``snapshot`` (a tar, gzip or not): ``coder-eval regrade``
    grades recorded episodes through here too."""
    task = plan.task
    verifier = await open_verifier(task, snapshot, pytest_config=before.pytest_config)
    try:
        if verifier.dropped:
            notes.append(f"left out of the workspace snapshot: {', '.join(map(str, verifier.dropped[:10]))}")
        for step in task.post_run:  # informational: what it prints or returns fails nothing
            await verifier.sandbox.exec(step.command, timeout=step.timeout)
        return await evaluate_criteria(
            task, verifier, before.prepared, events, final_message, plan.seed, before.agent_paths
        )
    finally:
        await close_quietly(verifier.sandbox, before.leftovers)


def start_event(plan: EpisodePlan, run_id: str) -> EpisodeStart:
    """The first line of an episode's trajectory: what ran, with hidden material left out."""
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
        task=recorded_task_data(task),
        task_hash=plan.frozen.task_hash if plan.frozen is not None else task_hash(task),
        provenance=plan.provenance,
        dataset_row=task.dataset_row,
        versions=versions(),
        scripted=task.agent.model == "scripted",
    )


def recorded_task_data(task: TaskSpec) -> dict[str, Any]:
    """The task as ``episode_start`` records it: every field resolved, hidden material left out, and
    each criterion as written (the fields it was given, so ``coder-eval regrade`` reads it back the
    same: a check like ``equals: null`` means something only when it was written)."""
    data = task.model_dump(mode="json", exclude=set(HIDDEN_FIELDS))
    data["success_criteria"] = [
        {"type": c.type, **c.model_dump(mode="json", exclude_unset=True)} for c in task.success_criteria
    ]
    return data


def _grade_now(plan: EpisodePlan, stage: Stage, sink: TrajectoryWriter) -> Grade:
    """Grades the workspace as it is at that moment, in a verifier made from a fresh snapshot."""

    async def grade(reply: str) -> list[CriterionResult]:
        try:
            snapshot = await take_snapshot(stage.sandbox)
        except WorkspaceTooLarge as exc:  # a failed check the agent is told about, not a harness fault
            details = {"error": str(exc)}
            return [
                CriterionResult(
                    criterion_id="workspace", kind="workspace", score=0, passed=False, details=details
                )
            ]
        with snapshot:
            return await verify(plan, stage, snapshot, list(sink.events), reply, [])

    return grade


def end_event(result: AgentResult, results: list[CriterionResult], task: TaskSpec) -> EpisodeEnd:
    """The ``episode_end`` of an agent's result and its verdicts (timings, notes and snapshot are
    filled in by the caller). An early stop is gated on the armed criteria alone."""
    outcome, status, error = episode_outcome(result, results)
    armed = armed_criteria(task) if result.status == "stopped_early" else []
    if armed and outcome != "invalid":
        threshold = task.run_limits.stop_early_gate_threshold
        outcome = "pass" if armed_outcome(results, armed, threshold) else "fail"
    return EpisodeEnd(
        outcome=outcome,
        status=status,
        invalid_cause=invalid_cause(result, status) if outcome == "invalid" else None,
        score=episode_score(results),
        usage=result.usage,
        cost_usd=result.cost_usd,
        num_turns=result.num_turns,
        duration_api_s=result.duration_api_s,
        error=error,
        agent_versions=result.versions,
        final_message=result.final_message,
        agent_status=result.status,
        agent_error=result.error,
    )


class _Phases:
    """Marks each phase in the trajectory as it begins and times it."""

    def __init__(self, sink: TrajectoryWriter) -> None:
        self.sink = sink
        self.start = self.mark = time.monotonic()
        self.current: str | None = None
        self.laps: dict[str, float] = {}
        self.leftovers: list[str] = []

    def enter(self, name: Phase, details: dict[str, Any] | None = None) -> None:
        self._lap()
        self.current = name
        self.sink.write(PhaseEvent(name=name, details=details or {}))

    def _lap(self) -> None:
        now = time.monotonic()
        if self.current is not None:
            self.laps[self.current] = self.laps.get(self.current, 0.0) + now - self.mark
        self.mark = now

    def timings(self) -> Timings:
        self._lap()
        verify_s = self.laps.get("verify", 0.0)
        return Timings(
            setup_s=self.laps.get("setup", 0.0),
            agent_s=self.laps.get("agent", 0.0),
            stop_s=self.laps.get("stop", 0.0),
            verify_s=verify_s,
            grade_s=verify_s,
            end_s=self.laps.get("end", 0.0),
            total_s=time.monotonic() - self.start,
        )


def harness_invalid(end: EpisodeEnd) -> bool:
    """The episode measured nothing because coder_eval, or where it ran, failed: ``--resume`` reruns it."""
    return end.outcome == "invalid" and end.invalid_cause == "harness"
