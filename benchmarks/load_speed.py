"""How fast ``load_runs`` reads trajectories, against a plain ``json.loads`` pass over the same files,
and how much memory it takes.

Run: ``python benchmarks/load_speed.py [--episodes 100000] [--events 50] [--dir DIR]``. Writes a run
directory of ``--episodes`` trajectories with the real writer (``TrajectoryWriter``: a line per event,
flushed, the file synced when it closes), then times, each in a fresh process: the floor (read every
file and ``json.loads`` every line, nothing else; the faster of two) and ``load_runs`` on the run.
Prints both, their ratio (target: under 2x) and the peak resident memory of the ``load_runs``
process (target: under 4 GB).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from coder_eval.analysis import load_runs
from coder_eval.run_dir import RunDir, RunManifest, episode_id
from coder_eval.trajectory import (
    CriterionResult,
    EpisodeEnd,
    EpisodeStart,
    Event,
    Message,
    Timings,
    ToolCall,
    ToolResult,
    TrajectoryWriter,
    Usage,
)

WRITERS = 8
"""Trajectories written at once (each file's sync waits on the disk, not the CPU)."""


def middle_events(n_events: int) -> list[Event]:
    """About ``n_events - 3`` events of a tool-using agent: messages, tool calls, results, a verdict."""
    events: list[Event] = []
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
            ),
            ToolCall(id=call, name="Bash", input={"command": f"pytest -q tests/test_{i}.py"}),
            ToolResult(id=call, output="1 passed in 0.01s\n" * 5, output_chars=90, duration_s=0.4),
            Message(role="user", content=[{"type": "tool_result", "tool_use_id": call, "content": "ok"}]),
        ]
    events.append(CriterionResult(criterion_id="tests", kind="hidden_tests", score=1.0, passed=True))
    return events


END = EpisodeEnd(
    outcome="pass",
    status="completed",
    score=1.0,
    timings=Timings(total_s=30.0),
    usage=Usage(input_tokens=9000),
    cost_usd=0.1,
    num_turns=12,
)


def generate(root: Path, n_episodes: int, n_events: int) -> Path:
    """A run directory with ``n_episodes`` trajectories (10 variants, one repeat each)."""
    run = RunDir.create(root, RunManifest(run_id="bench"))
    middle = middle_events(n_events)

    def write(i: int) -> None:
        task, variant = f"task{i // 10}", f"v{i % 10}"
        ep = episode_id(task, variant, 0)
        start = EpisodeStart(
            run_id="bench",
            episode_id=ep,
            task_id=task,
            variant_id=variant,
            seed=i,
            task={"initial_prompt": "Fix the failing test in src/app.py"},
        )
        with TrajectoryWriter(run.episode_path(ep)) as sink:
            for event in (start, *middle, END):
                sink.write(event)

    with ThreadPoolExecutor(WRITERS) as pool:
        list(pool.map(write, range(n_episodes)))
    return run.path


def json_floor(run: Path) -> None:
    """Read every file and json.loads every line."""
    for file in sorted((run / "episodes").glob("*.jsonl")):
        for line in file.read_bytes().decode("utf-8").splitlines():
            json.loads(line)


def load(run: Path) -> None:
    runs = load_runs(run)
    rows = sum(len(df) for df in (runs.episodes, runs.criteria, runs.tool_calls, runs.messages))
    print(f"{len(runs.episodes)} episodes, {rows} frame rows", file=sys.stderr)


def measured(what: str, run: Path) -> tuple[float, float]:
    """Seconds and peak resident GB of ``what`` (floor or load) in a fresh process."""
    child = subprocess.Popen([sys.executable, __file__, "--measure", what, str(run)], stdout=subprocess.PIPE)
    assert child.stdout is not None
    seconds = float(child.stdout.read())
    _, status, usage = os.wait4(child.pid, 0)
    if status != 0:
        raise SystemExit(f"the {what} process failed (status {status})")
    return seconds, usage.ru_maxrss * 1024 / 1e9


def measure_here(what: str, run: Path) -> None:
    """Time ``what`` in this process (its imports are done: only the reading is timed)."""
    started = time.perf_counter()
    (json_floor if what == "floor" else load)(run)
    print(time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=100_000)
    parser.add_argument("--events", type=int, default=50)
    parser.add_argument(
        "--dir", type=Path, help="Write the run under this folder (default: a temporary one)."
    )
    parser.add_argument("--measure", choices=("floor", "load"), help=argparse.SUPPRESS)
    args, rest = parser.parse_known_args()
    if args.measure:
        return measure_here(args.measure, Path(rest[0]))
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        started = time.perf_counter()
        run = generate(Path(tmp), args.episodes, args.events)
        written = time.perf_counter() - started
        files = list((run / "episodes").glob("*.jsonl"))
        megabytes = sum(f.stat().st_size for f in files) / 1e6
        floor = min(measured("floor", run)[0] for _ in range(2))
        elapsed, peak_gb = measured("load", run)
    print(f"{len(files)} trajectories, {megabytes:.0f} MB, written in {written:.0f} s by TrajectoryWriter")
    print(f"json.loads floor: {floor:.2f} s ({megabytes / floor:.0f} MB/s)")
    print(f"load_runs:        {elapsed:.2f} s ({megabytes / elapsed:.0f} MB/s)")
    print(f"ratio to floor:   {elapsed / floor:.2f}x (target < 2x)")
    print(f"peak memory of the load_runs process: {peak_gb:.2f} GB (target < 4 GB)")


if __name__ == "__main__":
    main()
