"""One recorded episode re-graded into a new run, through the runner's own verify phase.

Example::

    recorded = Recorded(read_trajectory(path), definitions.for_episode(start))
    regraded = await regrade_episode(recorded, source_run, new_run, "20261201-120000-000000")
    regraded.before, regraded.after.outcome           # ('pass', 'fail')

The new trajectory (docs/regrade.md):

- ``episode_start``: the recorded one, with the new run's ``run_id``, the task as re-graded (its
  criteria from the task file when one was given), and ``regraded_from`` (the recorded run, the
  outcome there, where the criteria came from);
- the agent's events, copied as recorded (messages, tool calls and results, recorded CLI calls, the
  endpoint's ``model_call`` record, the ``setup``, ``agent`` and ``stop`` phases), never run again;
  graders read them through the record check, as when the episode ran (``endpoint/check.py``);
- a new ``verify`` phase, the new criteria, the ``end`` phase and a new ``episode_end``: outcome,
  status and score from the new verdicts; the agent's tokens, cost, turns and final message as
  recorded; ``timings`` as recorded but for ``verify_s`` (this re-grade's) and ``total_s`` adjusted.

The verifier is seeded from the kept snapshot (linked into the new run, so it can be re-graded
again); the criteria's prepared state and the task's pytest configuration are rebuilt in a fresh
sandbox from the task's templates, as they were before the agent ran. An episode whose agent was
not measured (``invalid`` for any reason but a grader's), or whose trajectory is incomplete or
tampered, is copied with an ``episode_end`` that says so, never graded.
"""

from __future__ import annotations

import os
import shutil
import tarfile
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from coder_eval.agents import AgentResult
from coder_eval.endpoint.check import verified_view
from coder_eval.episode.plan import EpisodePlan
from coder_eval.episode.runner import (
    BeforeAgent,
    end_event,
    recorded_task_data,
    verify_snapshot,
    versions,
)
from coder_eval.errors import CoderEvalError
from coder_eval.regrade.before import before_agent
from coder_eval.regrade.criteria_plan import CriteriaSplit, evaluation_cost, needs_workspace, split_criteria
from coder_eval.regrade.tasks import GradingTask
from coder_eval.run_dir import RunDir
from coder_eval.sandbox.snapshot import WorkspaceTooLarge
from coder_eval.task import TaskSpec
from coder_eval.trajectory import (
    CriterionResult,
    EpisodeEnd,
    EpisodeStart,
    Event,
    Outcome,
    PhaseEvent,
    RegradeOrigin,
    Trajectory,
    TrajectoryWriter,
    now,
)


@dataclass(frozen=True)
class Recorded:
    """A recorded episode and the task it is re-graded with."""

    trajectory: Trajectory
    graded: GradingTask

    @property
    def start(self) -> EpisodeStart:
        start = self.trajectory.start
        assert start is not None, "regrade only takes trajectories that have an episode_start"
        return start


@dataclass(frozen=True)
class Regraded:
    """What re-grading one episode did."""

    episode_id: str
    variant_id: str
    before: Outcome
    after: EpisodeEnd
    graded: bool
    kept: list[str]
    not_regraded: list[str]
    evaluation_cost_usd: float | None


def measured(end: EpisodeEnd | None) -> bool:
    """The agent was measured: the episode ended, and it is not ``invalid`` for a reason other than
    a grader's failure."""
    return end is not None and (end.outcome != "invalid" or end.status == "grader_error")


async def regrade_episode(recorded: Recorded, source: RunDir, run: RunDir, run_id: str) -> Regraded:
    """Write the re-graded trajectory of ``recorded`` into ``run`` (see the module docstring)."""
    start, old = recorded.start, recorded.trajectory
    end = old.end if old.complete else None
    with TrajectoryWriter(run.episode_path(start.episode_id)) as sink:
        sink.write(_new_start(recorded, source, run_id))
        for event in agent_events(old.events):
            sink.write(event)
        if end is None or not measured(end):
            new_end = _not_graded(old, end)
            sink.write(new_end)
            return Regraded(start.episode_id, start.variant_id, _outcome(end), new_end, False, [], [], 0.0)
        return await _grade(recorded, end, source, run, sink)


async def _grade(
    recorded: Recorded, end: EpisodeEnd, source: RunDir, run: RunDir, sink: TrajectoryWriter
) -> Regraded:
    """The verify and end phases of a measured episode, written to ``sink``."""
    start, started = recorded.start, time.monotonic()
    sink.write(PhaseEvent(name="verify", details={"regraded_from": start.run_id}))
    snapshot, why = _link_snapshot(source, run, start.episode_id, end)
    recorded_results = [e for e in recorded.trajectory.events if isinstance(e, CriterionResult)]
    split = split_criteria(
        recorded.graded.task, start, recorded_results, has_snapshot=snapshot is not None, why_no_snapshot=why
    )
    notes: list[str] = [*recorded.graded.notes, *_kept_note(split)]
    failure: Exception | None = None
    ran: list[CriterionResult] = []
    checked = end.record.source if end.record is not None else None
    try:  # graders read what the endpoint's record verifies, as when the episode ran
        ran = await _run(recorded, split, snapshot, verified_view(list(sink.events), checked), end, notes)
    except Exception as exc:  # the harness failed, not the agent: recorded, and the batch goes on
        failure = exc
    results = split.merged(ran) if failure is None else []
    for result in results:
        sink.write(result)
    sink.write(PhaseEvent(name="end"))
    new_end = _new_end(end, results, recorded.graded.task, time.monotonic() - started, notes, failure)
    new_end.snapshot = end.snapshot if snapshot is not None else None
    new_end.record = end.record
    sink.write(new_end)
    kept, missing = sorted(split.kept), sorted(split.missing)
    return Regraded(
        start.episode_id, start.variant_id, end.outcome, new_end, True, kept, missing, evaluation_cost(ran)
    )


def agent_events(events: Sequence[Event]) -> list[Event]:
    """The recorded events between ``episode_start`` and grading (the first ``verify`` phase,
    criterion or ``episode_end``): the agent's run, copied as recorded."""
    copied: list[Event] = []
    for event in events[1:]:
        if isinstance(event, CriterionResult | EpisodeEnd):
            break
        if isinstance(event, PhaseEvent) and event.name in ("verify", "end"):
            break
        copied.append(event)
    return copied


async def _run(
    recorded: Recorded,
    split: CriteriaSplit,
    snapshot: Path | None,
    events: list[Event],
    end: EpisodeEnd,
    notes: list[str],
) -> list[CriterionResult]:
    """Evaluate ``split.to_run`` in a fresh verifier (the runner's verify phase)."""
    if not split.to_run:
        return []
    start = recorded.start
    task = recorded.graded.task.model_copy(update={"success_criteria": split.to_run})
    plan = EpisodePlan(task, start.variant_id, start.repeat, start.provenance)
    paths = _agent_paths(events)
    leftovers: list[str] = []
    if snapshot is not None and needs_workspace(split.to_run):
        before = await before_agent(task, paths, leftovers)
    else:
        before = BeforeAgent([None] * len(split.to_run), None, paths, leftovers)
    with tempfile.TemporaryDirectory(prefix="coder_eval-regrade-") as scratch:
        workspace = snapshot if snapshot is not None else _empty_tar(Path(scratch) / "empty.tar")
        ran = await verify_snapshot(plan, before, workspace, events, end.final_message, notes)
    notes.extend(leftovers)
    return ran


def _agent_paths(events: Sequence[Event]) -> dict[str, str]:
    """Where the agent ran, from its ``agent`` phase (criteria translate paths in tool calls with it)."""
    for event in events:
        if isinstance(event, PhaseEvent) and event.name == "agent":
            return {key: str(value) for key, value in event.details.items()}
    return {}


def _empty_tar(path: Path) -> Path:
    with tarfile.open(path, mode="w"):
        pass
    return path


def _link_snapshot(source: RunDir, run: RunDir, episode_id: str, end: EpisodeEnd) -> tuple[Path | None, str]:
    """The recorded snapshot, linked (else copied) into the new run; or None and why there is none."""
    record = end.snapshot
    if record is None or record.file is None:
        return None, (record.note or "not kept") if record else "the run kept none"
    found = source.path / record.file
    if not found.is_file():
        return None, f"{record.file} is missing from {source.path}"
    target = run.snapshot_path(episode_id)
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(found, target)
    except OSError:  # another filesystem, or links not allowed: a copy does as well
        shutil.copy2(found, target)
    return target, ""


def _new_start(recorded: Recorded, source: RunDir, run_id: str) -> EpisodeStart:
    start, old = recorded.start, recorded.trajectory
    end = old.end if old.complete else None
    origin = RegradeOrigin(
        run_id=start.run_id,
        run_dir=str(source.path),
        outcome=_outcome(end),
        status=end.status if end is not None else ("tampered" if old.tampered else "interrupted"),
        score=end.score if end is not None else 0.0,
        criteria=recorded.graded.source,
        task_file=recorded.graded.task_file,
        versions=versions(),
    )
    task = recorded_task_data(recorded.graded.task)
    return start.model_copy(update={"run_id": run_id, "task": task, "regraded_from": origin})


def _outcome(end: EpisodeEnd | None) -> Outcome:
    return end.outcome if end is not None else "invalid"


def agent_result(end: EpisodeEnd) -> AgentResult:
    """How the agent's run ended, as recorded (before grading)."""
    graded_error = end.status == "grader_error"
    status = end.agent_status or ("completed" if graded_error else end.status)
    error = end.agent_error if end.agent_status is not None else (None if graded_error else end.error)
    return AgentResult(
        status=status,
        invalid=not measured(end),
        error=error,
        usage=end.usage,
        cost_usd=end.cost_usd,
        num_turns=end.num_turns,
        duration_api_s=end.duration_api_s,
        final_message=end.final_message,
        versions=end.agent_versions,
    )


def _new_end(
    end: EpisodeEnd,
    results: list[CriterionResult],
    task: TaskSpec,
    verify_s: float,
    notes: list[str],
    failure: Exception | None = None,
) -> EpisodeEnd:
    new = end_event(agent_result(end), results, task)
    if isinstance(failure, WorkspaceTooLarge):  # the agent's workspace, as the live run would judge it
        new.outcome, new.status, new.invalid_cause = "fail", "resource_limit", None
        new.error = f"re-grading refused the workspace: {failure}"
    elif failure is not None:
        why = str(failure) if isinstance(failure, CoderEvalError) else f"{type(failure).__name__}: {failure}"
        new.outcome, new.status, new.error = "invalid", "infra_error", f"re-grading failed: {why}"
    was = end.timings
    new.timings = was.model_copy(
        update={"verify_s": verify_s, "grade_s": verify_s, "total_s": was.total_s - was.verify_s + verify_s}
    )
    new.notes = list(dict.fromkeys([*end.notes, *notes]))
    return new


def _kept_note(split: CriteriaSplit) -> list[str]:
    if not split.kept:
        return []
    kept = ", ".join(sorted(split.kept))
    return [f"kept as recorded (no workspace snapshot; the criterion is unchanged): {kept}"]


def _not_graded(old: Trajectory, end: EpisodeEnd | None) -> EpisodeEnd:
    """The end of an episode that is copied, not graded: why, in its error and notes."""
    if end is not None:
        note = f"not re-graded: the agent was not measured ({end.status})"
        return end.model_copy(update={"ts": now(), "notes": [*end.notes, note]})
    tampered = old.tampered
    why = "was written to after it ended" if tampered else "never finished (no episode_end)"
    return EpisodeEnd(
        outcome="invalid",
        status="tampered" if tampered else "interrupted",
        error=f"the recorded trajectory {why}: nothing to re-grade",
    )
