"""Builders for the re-grading tests: task files, runs made in-process, trajectories read back."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from coder_eval.episode.plan import plan_episodes
from coder_eval.episode.snapshots import DEFAULT_MAX_BYTES
from coder_eval.regrade import RegradeResult, regrade_run
from coder_eval.run.batch import run_batch
from coder_eval.run_dir import PlannedEpisode, RunDir, RunManifest
from coder_eval.task import load_tasks
from coder_eval.trajectory import CriterionResult, EpisodeEnd, Trajectory, read_trajectory
from tests.helpers import write_task

GREET = """
task_id: {task_id}
initial_prompt: write ok to ok.txt
sandbox: {{driver: tempdir}}
reference_solution: |
  echo ran >> {counter}
  echo {writes} > ok.txt
success_criteria:
  - id: words
    type: file_contains
    path: ok.txt
    includes: {includes}
  - id: wrote-it
    type: command_executed
    pattern: "{pattern}"
"""


def greet_task(
    folder: Path,
    task_id: str,
    *,
    counter: Path,
    writes: str = "ok",
    includes: Sequence[str] = ("ok",),
    pattern: str = "echo",
) -> Path:
    """A task the oracle solves by writing ``writes``, counting each oracle run in ``counter``; graded
    on the file (workspace) and on the command it ran (trajectory)."""
    body = GREET.format(
        task_id=task_id, counter=counter, writes=writes, includes=list(includes), pattern=pattern
    )
    return write_task(folder, body, f"{task_id}.yaml")


def make_run(
    root: Path,
    paths: Sequence[Path],
    *,
    overrides: dict[str, Any] | None = None,
    snapshot_max_bytes: int | None = DEFAULT_MAX_BYTES,
    run_id: str = "source",
) -> RunDir:
    """Run ``paths`` with the oracle (unless ``overrides`` say otherwise) into ``root/<run_id>``."""
    tasks = load_tasks(paths, {"agent": {"kind": "oracle"}, **(overrides or {})})
    plans = plan_episodes(tasks)
    episodes = [
        PlannedEpisode(
            episode_id=p.episode_id, task_id=p.task.task_id, variant_id=p.variant_id, repeat=p.repeat
        )
        for p in plans
    ]
    run = RunDir.create(root, RunManifest(run_id=run_id, tasks=[t.task_id for t in tasks], episodes=episodes))
    asyncio.run(run_batch(plans, run, run_id=run_id, concurrency=2, snapshot_max_bytes=snapshot_max_bytes))
    return run


def regrade(run: RunDir, target: Path, task_files: Sequence[Path] = ()) -> RegradeResult:
    return asyncio.run(regrade_run(run.path, target, task_files, concurrency=2))


def trajectories(run: RunDir | Path) -> dict[str, Trajectory]:
    path = run.path if isinstance(run, RunDir) else run
    return {p.stem: read_trajectory(p) for p in sorted((path / "episodes").glob("*.jsonl"))}


def verdicts(trajectory: Trajectory) -> dict[str, tuple[float, bool, str | None]]:
    """Criterion id -> (score, passed, error)."""
    return {
        e.criterion_id: (e.score, e.passed, e.error)
        for e in trajectory.events
        if isinstance(e, CriterionResult)
    }


def end_of(trajectory: Trajectory) -> EpisodeEnd:
    assert trajectory.end is not None, trajectory.problems
    return trajectory.end
