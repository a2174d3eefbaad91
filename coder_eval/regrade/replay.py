"""A finished run replayed offline: each episode's endpoint record made a script, run again through the
real CLI on the scripted server, with no key (``coder-eval replay``), and compared with the recording.

Example::

    result = asyncio.run(replay_run(Path("runs/paid"), Path("runs/paid-replay")))
    result.record.same, result.record.differing   # 12, {"t3--base--r0": ["grade 0-pytest: pass -> fail"]}

An episode is replayed with the task it ran (``regrade.tasks``: the recorded task, its hidden material
from the task file), its agent's model set to ``scripted`` and its ``scripted`` block the script of
its record (``endpoint/replay.py``). The replay's tool calls (as the endpoint's record verifies them,
in the canonical vocabulary, workspace paths made relative), its grades and its outcome are compared
with the recording's. Not replayed: episodes without an endpoint record (no harness vantage point, or
an agent that talks to no model), unfinished ones and those the harness or the provider left
``invalid``. What cannot come out the same is in docs/replay.md (time, randomness, the network).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from coder_eval.agents.tools import canonical_input, canonical_name
from coder_eval.endpoint.check import verified_view
from coder_eval.endpoint.replay import script_of
from coder_eval.episode.plan import EpisodePlan
from coder_eval.episode.runner import run_episode, versions
from coder_eval.errors import InputError, TaskError
from coder_eval.manifest import ReplayRecord
from coder_eval.regrade.tasks import TaskDefinitions
from coder_eval.run.session import RunSession
from coder_eval.run_dir import RunDir, RunManifest
from coder_eval.task import TaskSpec
from coder_eval.trajectory import (
    CriterionResult,
    EpisodeEnd,
    Event,
    ModelCall,
    PhaseEvent,
    ToolCall,
    Trajectory,
    now,
    read_trajectory,
)
from coder_eval.transcript import input_summary

DIFFERENCES_KEPT = 10
"""Differences kept per episode in ``replayed_from``."""


@dataclass(frozen=True)
class Replayed:
    """One episode replayed: its recording's end, the replay's, and what differed."""

    episode_id: str
    variant_id: str
    before: EpisodeEnd
    after: EpisodeEnd
    differences: list[str]


@dataclass(frozen=True)
class ReplayResult:
    """The new run, its record (also in its ``run.json``), and each episode replayed."""

    run: RunDir
    record: ReplayRecord
    episodes: list[Replayed]


def replay_task(task: TaskSpec, events: Sequence[Event]) -> TaskSpec:
    """``task`` with its model played by the script of the episode's endpoint record."""
    agent = task.agent.model_copy(update={"model": "scripted"})
    return task.model_copy(update={"agent": agent, "scripted": script_of(events)})


def replayable(trajectory: Trajectory) -> str | None:
    """Why the episode cannot be replayed, or None."""
    end = trajectory.end
    if not trajectory.complete or end is None:
        return "it never finished"
    if end.outcome == "invalid" and end.invalid_cause in ("harness", "provider"):
        return f"its agent was not measured ({end.status})"
    if not any(isinstance(e, ModelCall) for e in trajectory.events):
        return "it has no endpoint record (no harness vantage point on its model)"
    return None


async def replay_run(
    source_dir: Path,
    target: Path,
    task_files: Sequence[Path] = (),
    *,
    concurrency: int = 1,
    command: Sequence[str] = (),
    on_done: Callable[[Replayed], None] | None = None,
) -> ReplayResult:
    """Replay every replayable episode of the run at ``source_dir`` into a new run at ``target``."""
    if target.exists():
        raise InputError(f"{target} already exists; choose a new --run-dir for the replay")
    source = RunDir.open(source_dir)
    definitions = TaskDefinitions.load(task_files)
    plans, skipped = _plans(source, definitions)
    if not plans:
        raise InputError(
            f"{source_dir}: no episode can be replayed ({'; '.join(skipped.values()) or 'none'})"
        )
    record = ReplayRecord(run_id=source.read_manifest().run_id, run_dir=str(source.path), skipped=skipped)
    chosen = {plan.episode_id for plan, _ in plans}
    manifest = _new_manifest(source.read_manifest(), target.name, command, record, chosen)
    gate = asyncio.Semaphore(max(1, concurrency))

    async def one(plan: EpisodePlan, recorded: Trajectory, run: RunDir) -> Replayed:
        async with gate:
            await run_episode(plan, manifest.run_id, run.episode_path(plan.episode_id))
        replayed = compare(recorded, read_trajectory(run.episode_path(plan.episode_id)))
        if on_done is not None:
            on_done(replayed)
        return replayed

    with RunSession.derive(manifest, target) as session, session.running(None) as run:
        episodes = list(await asyncio.gather(*(one(p, t, run) for p, t in plans)))
        manifest.replayed_from = _summary(record, episodes)
    return ReplayResult(run, manifest.replayed_from, episodes)


def _plans(
    source: RunDir, definitions: TaskDefinitions
) -> tuple[list[tuple[EpisodePlan, Trajectory]], dict[str, str]]:
    plans, skipped = [], {}
    for path in source.trajectory_paths():
        trajectory = read_trajectory(path)
        start = trajectory.start
        why = replayable(trajectory) if start is not None else "no episode_start"
        if start is None or why is not None:
            skipped[start.episode_id if start else path.stem] = why or ""
            continue
        try:
            task = definitions.for_episode(start).task
        except TaskError as exc:
            skipped[start.episode_id] = str(exc)
            continue
        plan = EpisodePlan(
            replay_task(task, trajectory.events), start.variant_id, start.repeat, start.provenance
        )
        plans.append((plan, trajectory))
    return plans, skipped


def compare(recorded: Trajectory, replayed: Trajectory) -> Replayed:
    """What the replay did differently: the tool calls the endpoint verified, grades, outcome."""
    before, after = recorded.end, replayed.end
    assert before is not None and replayed.start is not None
    if after is None:
        after = EpisodeEnd(outcome="invalid", status="interrupted", error="the replay never finished")
    differences = _call_differences(calls_of(recorded.events), calls_of(replayed.events))
    differences += _grade_differences(grades_of(recorded.events), grades_of(replayed.events))
    if (before.outcome, before.status) != (after.outcome, after.status):
        differences.append(f"outcome {before.outcome} ({before.status}) -> {after.outcome} ({after.status})")
    start = replayed.start
    return Replayed(start.episode_id, start.variant_id, before, after, differences)


def calls_of(events: Sequence[Event]) -> list[tuple[str, str]]:
    """The episode's tool calls as graders read them (verified by its record), canonical, each input as
    JSON with the workspace's own path made relative: what a replay must reproduce."""
    end = next((e for e in reversed(events) if isinstance(e, EpisodeEnd)), None)
    source = end.record.source if end is not None and end.record is not None else None
    workdir = next(
        (
            str(e.details.get("workdir", ""))
            for e in events
            if isinstance(e, PhaseEvent) and e.name == "agent"
        ),
        "",
    )
    out = []
    for event in verified_view(events, source):
        if isinstance(event, ToolCall):
            text = json.dumps(canonical_input(event.name, event.input), sort_keys=True)
            if workdir:
                text = text.replace(workdir.rstrip("/") + "/", "").replace(workdir.rstrip("/"), ".")
            out.append((canonical_name(event.name), text))
    return out


def grades_of(events: Sequence[Event]) -> dict[str, tuple[bool, float]]:
    """Each criterion's verdict: passed, and its score."""
    return {e.criterion_id: (e.passed, round(e.score, 6)) for e in events if isinstance(e, CriterionResult)}


def _call_differences(before: list[tuple[str, str]], after: list[tuple[str, str]]) -> list[str]:
    differences = []
    for index in range(max(len(before), len(after))):
        was = before[index] if index < len(before) else None
        now_ = after[index] if index < len(after) else None
        if was != now_:
            differences.append(f"tool call #{index}: {_call(was)} -> {_call(now_)}")
    return differences


def _call(call: tuple[str, str] | None) -> str:
    if call is None:
        return "none"
    name, text = call
    summary: Any = input_summary(json.loads(text)) if text.startswith("{") else text
    return f"{name} {str(summary)[:120]}"


def _grade_differences(
    before: dict[str, tuple[bool, float]], after: dict[str, tuple[bool, float]]
) -> list[str]:
    out = []
    for criterion in sorted(before.keys() | after.keys()):
        was, now_ = before.get(criterion), after.get(criterion)
        if was != now_:
            out.append(f"grade {criterion}: {_grade(was)} -> {_grade(now_)}")
    return out


def _grade(grade: tuple[bool, float] | None) -> str:
    if grade is None:
        return "none"
    return f"{'pass' if grade[0] else 'fail'} ({grade[1]:g})"


def _new_manifest(
    source: RunManifest, run_id: str, command: Sequence[str], record: ReplayRecord, chosen: set[str]
) -> RunManifest:
    """The source's plan of the ``chosen`` episodes under a new id, its experiment record kept (the
    compare report reads it)."""
    return source.model_copy(
        update={
            "episodes": [e for e in source.episodes if e.episode_id in chosen],
            "run_id": run_id,
            "created_at": now(),
            "status": "running",
            "command": list(command),
            "versions": versions(),
            "snapshots": None,
            "regraded_from": None,
            "replayed_from": record,
            "resumes": [],
            "inputs": None,
            "budget": None,
            "gates": None,
            "headline": None,
            "adaptive": None,
            "extra": {},
        }
    )


def _summary(record: ReplayRecord, episodes: Sequence[Replayed]) -> ReplayRecord:
    differing = {e.episode_id: e.differences[:DIFFERENCES_KEPT] for e in episodes if e.differences}
    return record.model_copy(
        update={"episodes": len(episodes), "same": len(episodes) - len(differing), "differing": differing}
    )
