"""Builders for the store's tests: run folders of synthetic trajectories with planted outcomes."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path

from coder_eval.manifest import PlannedEpisode, RunStatus, SourceRecord
from coder_eval.run_dir import RunDir, RunManifest, episode_id
from coder_eval.trajectory import (
    CriterionResult,
    EpisodeEnd,
    EpisodeStart,
    Message,
    Timings,
    ToolCall,
    ToolResult,
    TrajectoryWriter,
    Usage,
)

Outcomes = Mapping[tuple[str, str, int], str]
"""(task_id, variant_id, repeat) -> pass / fail / invalid."""
EPOCH = datetime(2026, 11, 1, tzinfo=UTC)


def grid(tasks: Mapping[str, str], variants: tuple[str, ...] = ("default",), repeats: int = 1) -> dict:
    """Every (task, variant, repeat) with the task's outcome: ``grid({"a": "pass"}, ("x", "y"))``."""
    return {(t, v, r): o for t, o in tasks.items() for v in variants for r in range(repeats)}


def write_run(
    root: Path,
    run_id: str,
    outcomes: Outcomes,
    *,
    branch: str | None = "main",
    hashes: Mapping[str, str] | None = None,
    day: int = 0,
    cost: float = 0.1,
    model: str = "claude-x",
    tags: tuple[str, ...] = ("api",),
    judge: Mapping[str, bool] | None = None,
    status: RunStatus = "completed",
    not_reached: int = 0,
    scripted: bool = False,
) -> Path:
    """A run folder under ``root`` (``day``: days after 2026-11-01 it was made; ``judge``:
    episode id -> the verdict of a ``judge`` criterion recorded beside ``tests``; ``status``: the
    run's, default completed; ``not_reached``: planned episodes of a task ``later`` never run;
    ``scripted``: the episodes ran against the scripted model)."""
    tasks = list(dict.fromkeys(t for t, _, _ in outcomes))
    variants = list(dict.fromkeys(v for _, v, _ in outcomes))
    manifest = RunManifest(
        run_id=run_id, variants=variants, tasks=tasks, status=status,
        created_at=EPOCH + timedelta(days=day), versions={"coder_eval": "0.test"},
        episodes=[PlannedEpisode(episode_id=episode_id(t, v, r), task_id=t, variant_id=v, repeat=r)
                  for t, v, r in [*outcomes, *(("later", variants[0], r) for r in range(not_reached))]],
        source=SourceRecord(git_commit=f"c{day:04d}", git_branch=branch) if branch else None,
        task_hashes={t: (hashes or {}).get(t, f"sha256:{t}") for t in tasks},
    )  # fmt: skip
    run = RunDir.create(root, manifest)
    for (task, variant, repeat), outcome in outcomes.items():
        ep = episode_id(task, variant, repeat)
        passed = outcome == "pass"
        events = [
            EpisodeStart(run_id=run_id, episode_id=ep, task_id=task, variant_id=variant, repeat=repeat,
                         seed=repeat, tags=list(tags), agent={"kind": "claude-code", "model": model},
                         task={"initial_prompt": f"do {task}"}, task_hash=f"sha256:{variant}/{task}",
                         scripted=scripted),
            Message(role="assistant", model=model, usage=Usage(input_tokens=100, output_tokens=10),
                    content=[{"type": "text", "text": "working"}]),
            ToolCall(id="c1", name="Bash", input={"command": "pytest -q"}),
            ToolResult(id="c1", output="ok", output_chars=2, duration_s=0.1),
            CriterionResult(criterion_id="tests", kind="hidden_tests", score=float(passed), passed=passed),
        ]  # fmt: skip
        if judge is not None and ep in judge:
            verdict = judge[ep]
            events.append(CriterionResult(criterion_id="judge", kind="llm_judge", score=float(verdict),
                                          passed=verdict, gating=False))  # fmt: skip
        end = EpisodeEnd(outcome=outcome, status="completed" if outcome != "invalid" else "agent_error",  # type: ignore[arg-type]
                         score=float(passed), timings=Timings(total_s=10.0), usage=Usage(input_tokens=100),
                         cost_usd=cost, num_turns=3)  # fmt: skip
        with TrajectoryWriter(run.episode_path(ep), durable=False) as sink:
            for event in (*events, end):
                sink.write(event)
    run.write_manifest(manifest)
    run.release()
    return run.path
