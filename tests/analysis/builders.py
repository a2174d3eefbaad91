"""Small trajectories for the analysis tests, written with the real event models.

Example::

    path = write_episode(tmp_path, "t1", "base", passed=True)
    runs = load_runs(tmp_path)
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from coder_eval.run_dir import PlannedEpisode, RunDir, RunManifest, episode_id
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

RUN_ID = "run1"


def write_episode(
    root: Path,
    task: str,
    variant: str,
    repeat: int = 0,
    *,
    outcome: str = "pass",
    cost: float | None = 0.01,
    tokens: int = 1000,
    labels: tuple[str | None, str | None] | None = None,
    votes: Sequence[bool] | None = None,
    end: bool = True,
    run_id: str = RUN_ID,
    criterion: str = "tests",
    cause: str | None = None,
) -> Path:
    """One complete trajectory under ``root/<run_id>/episodes/`` (a run directory is made if needed)."""
    run = root / run_id
    if not (run / "run.json").exists():
        RunDir.create(root, RunManifest(run_id=run_id))
    ep = episode_id(task, variant, repeat)
    path = RunDir(run).episode_path(ep)
    with TrajectoryWriter(path) as sink:
        sink.write(
            EpisodeStart(
                run_id=run_id,
                episode_id=ep,
                task_id=task,
                variant_id=variant,
                repeat=repeat,
                seed=0,
                agent={"kind": "command", "model": "m"},
                task={"initial_prompt": f"do {task}"},
            )
        )
        sink.write(Message(role="user", content=[{"type": "text", "text": "hi"}]))
        sink.write(
            Message(
                role="assistant",
                model="claude-x",
                content=[{"type": "text", "text": "ok"}],
                usage=Usage(input_tokens=tokens, output_tokens=10),
            )
        )
        sink.write(ToolCall(id="c1", name="Bash", input={"command": "ls"}))
        sink.write(ToolResult(id="c1", output="a", is_error=False, duration_s=0.5))
        passed = outcome == "pass"
        details: dict[str, Any] = {}
        if votes is not None:
            details["votes"] = [
                {
                    "passed": v,
                    "score": float(v),
                    "rationale": "",
                    "input_tokens": 100,
                    "output_tokens": 5,
                    "cost_usd": 0.001,
                }
                for v in votes
            ]
        sink.write(
            CriterionResult(
                criterion_id=criterion,
                kind="hidden_tests",
                score=float(passed),
                passed=passed,
                details=details,
                observed_label=labels[0] if labels else None,
                expected_label=labels[1] if labels else None,
            )
        )
        if end:
            sink.write(
                EpisodeEnd(
                    outcome=outcome,
                    status="completed",
                    score=float(passed),  # type: ignore[arg-type]
                    timings=Timings(total_s=10.0, agent_s=8.0),
                    num_turns=2,
                    cost_usd=cost,
                    usage=Usage(input_tokens=tokens, output_tokens=10),
                    invalid_cause=cause if outcome == "invalid" else None,  # type: ignore[arg-type]
                )
            )
    return path


def write_suite(root: Path, outcomes: dict[str, dict[str, Iterable[str]]], **kw: Any) -> Path:
    """Trajectories from ``{variant: {task: [outcome per repeat]}}``; returns the run directory."""
    for variant, tasks in outcomes.items():
        for task, results in tasks.items():
            for repeat, outcome in enumerate(results):
                write_episode(root, task, variant, repeat, outcome=outcome, **kw)
    return root / kw.get("run_id", RUN_ID)


def write_ab_run(
    root: Path,
    run_id: str,
    outcomes: dict[str, dict[str, Sequence[str]]],
    triggers: dict[str, dict[str, Sequence[tuple[str | None, str | None]]]] | None = None,
    costs: dict[str, float] | None = None,
) -> Path:
    """A run directory as ``coder-eval run`` leaves it: graded tasks (``{variant: {task: [outcome per
    repeat]}}``), optional trigger-dataset rows whose only criterion is a classification (``{variant:
    {task: [(observed, expected) per repeat]}}``, criterion ``skill``), and a manifest naming the
    variants and every planned episode. ``costs`` gives a task's cost per episode (default 0.01); an
    outcome ``"invalid:provider"`` records that cause."""
    planned = []
    for variant, tasks in outcomes.items():
        for task, results in tasks.items():
            for repeat, spelled in enumerate(results):
                cost = (costs or {}).get(task, 0.01)
                outcome, _, cause = spelled.partition(":")
                write_episode(
                    root,
                    task,
                    variant,
                    repeat,
                    outcome=outcome,
                    run_id=run_id,
                    cost=cost,
                    cause=cause or None,
                )
                planned.append((task, variant, repeat))
    for variant, rows in (triggers or {}).items():
        for task, labels in rows.items():
            for repeat, (observed, expected) in enumerate(labels):
                outcome = "pass" if observed == expected else "fail"
                write_episode(
                    root, task, variant, repeat, outcome=outcome, labels=(observed, expected),
                    run_id=run_id, criterion="skill",
                )  # fmt: skip
                planned.append((task, variant, repeat))
    run = RunDir(root / run_id)
    manifest = run.read_manifest()
    manifest.experiment_id = f"exp-{run_id}"
    manifest.variants = list(dict.fromkeys([*outcomes, *(triggers or {})]))
    manifest.tasks = sorted({t for t, _, _ in planned})
    manifest.episodes = [
        PlannedEpisode(episode_id=episode_id(t, v, r), task_id=t, variant_id=v, repeat=r)
        for t, v, r in planned
    ]
    manifest.status = "completed"
    manifest.extra = {
        "experiment": {"path": None, "variants": [], "compare": {"tags": [], "exclude_tags": []}}
    }
    run.write_manifest(manifest)
    return run.path


def episodes_frame(outcomes: dict[str, dict[str, Sequence[str]]], **columns: Any) -> pd.DataFrame:
    """An episodes-like frame straight from outcomes, without files (fast, for statistics tests)."""
    rows = [
        {
            "task_id": task,
            "variant_id": variant,
            "repeat": r,
            "outcome": o,
            "passed": None if o == "invalid" else o == "pass",
            "path": f"{task}-{variant}-{r}.jsonl",
        }
        for variant, tasks in outcomes.items()
        for task, results in tasks.items()
        for r, o in enumerate(results)
    ]
    df = pd.DataFrame(rows).astype({"passed": "boolean"})
    for name, values in columns.items():
        df[name] = values
    return df


def binary_frame(a: Sequence[int], b: Sequence[int]) -> pd.DataFrame:
    """One run per task: ``a[i]``/``b[i]`` are 1 when task i passed in variant a/b."""
    outcome = {1: "pass", 0: "fail"}
    return episodes_frame(
        {
            "a": {f"t{i}": [outcome[x]] for i, x in enumerate(a)},
            "b": {f"t{i}": [outcome[x]] for i, x in enumerate(b)},
        }
    )
