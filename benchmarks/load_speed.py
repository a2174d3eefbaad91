"""How fast ``load_runs`` reads trajectories, against a plain ``json.loads`` pass over the same files.

Run: ``python benchmarks/load_speed.py [--episodes 10000] [--events 50]``. Prints MB/s and the ratio
to the floor (read every file and ``json.loads`` every line, nothing else).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from coder_eval.analysis import load_runs
from coder_eval.run_dir import RunDir, RunManifest, episode_id
from coder_eval.trajectory import (
    CriterionResult,
    EpisodeEnd,
    EpisodeStart,
    Message,
    Timings,
    ToolCall,
    ToolResult,
    Usage,
)


def episode_lines(task: str, variant: str, run_id: str, n_events: int) -> str:
    """One synthetic trajectory of about ``n_events`` lines, serialised once by the real models."""
    ep = episode_id(task, variant, 0)
    events: list[str] = [
        EpisodeStart(
            run_id=run_id,
            episode_id=ep,
            task_id=task,
            variant_id=variant,
            seed=1,
            task={"initial_prompt": "Fix the failing test in src/app.py"},
        ).model_dump_json()
    ]
    for i in range((n_events - 3) // 4):
        call = f"c{i}"
        events += [
            Message(
                role="assistant",
                model="claude-x",
                usage=Usage(input_tokens=900, output_tokens=80),
                content=[
                    {"type": "text", "text": "Let me look at the file. " * 4},
                    {"type": "tool_use", "id": call, "name": "Bash", "input": {"command": "ls"}},
                ],
            ).model_dump_json(),
            ToolCall(
                id=call, name="Bash", input={"command": f"pytest -q tests/test_{i}.py"}
            ).model_dump_json(),
            ToolResult(
                id=call, output="1 passed in 0.01s\n" * 5, output_chars=90, duration_s=0.4
            ).model_dump_json(),
            Message(
                role="user", content=[{"type": "tool_result", "tool_use_id": call, "content": "ok"}]
            ).model_dump_json(),
        ]
    events.append(
        CriterionResult(criterion_id="tests", kind="hidden_tests", score=1.0, passed=True).model_dump_json()
    )
    events.append(
        EpisodeEnd(
            outcome="pass",
            status="completed",
            score=1.0,
            timings=Timings(total_s=30.0),
            usage=Usage(input_tokens=9000),
            cost_usd=0.1,
            num_turns=12,
        ).model_dump_json()
    )
    return "\n".join(events) + "\n"


def generate(root: Path, n_episodes: int, n_events: int) -> Path:
    """A run directory with ``n_episodes`` trajectories (10 variants, one repeat each)."""
    run = RunDir.create(root, RunManifest(run_id="bench"))
    for i in range(n_episodes):
        task, variant = f"task{i // 10}", f"v{i % 10}"
        run.episode_path(episode_id(task, variant, 0)).write_text(
            episode_lines(task, variant, "bench", n_events)
        )
    return run.path


def json_floor(files: list[Path]) -> float:
    """Seconds to read every file and json.loads every line."""
    start = time.perf_counter()
    for file in files:
        for line in file.read_bytes().decode("utf-8").splitlines():
            json.loads(line)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--episodes", type=int, default=10_000)
    parser.add_argument("--events", type=int, default=50)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        run = generate(Path(tmp), args.episodes, args.events)
        files = sorted((run / "episodes").glob("*.jsonl"))
        megabytes = sum(f.stat().st_size for f in files) / 1e6
        floor = min(json_floor(files) for _ in range(2))
        start = time.perf_counter()
        runs = load_runs(run)
        elapsed = time.perf_counter() - start
    rows = sum(len(df) for df in (runs.episodes, runs.criteria, runs.tool_calls, runs.messages))
    print(f"{len(files)} trajectories, {megabytes:.1f} MB, {rows} frame rows")
    print(f"json.loads floor: {floor:.2f} s ({megabytes / floor:.1f} MB/s)")
    print(f"load_runs:        {elapsed:.2f} s ({megabytes / elapsed:.1f} MB/s)")
    print(f"ratio to floor:   {elapsed / floor:.2f}x (target < 2x)")


if __name__ == "__main__":
    main()
