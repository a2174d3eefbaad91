"""Harness overhead per episode: wall time minus the time the reference solution itself took.

Runs N trivial oracle episodes (default 200) at -j 1 and at -j 4 and prints the median and p90
overhead per episode and the episodes per second of each.

    .venv/bin/python benchmarks/harness_overhead.py --episodes 200
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import textwrap
import time
from pathlib import Path

from coder_eval.run_dir import RunDir, RunManifest
from coder_eval.runner import plan_episodes, run_batch
from coder_eval.task import load_tasks
from coder_eval.trajectory import EpisodeEnd, ToolResult, read_trajectory

TASK = """
task_id: trivial
initial_prompt: write ok
agent: {kind: oracle}
reference_solution: echo ok > ok.txt
success_criteria:
  - {type: file_contains, path: ok.txt, includes: [ok]}
"""


def overheads(run: RunDir) -> list[float]:
    """Per episode: total wall time (sandbox made, graded and removed) minus the reference solution's
    own command time."""
    values = []
    for path in run.trajectory_paths():
        events = read_trajectory(path).events
        end = events[-1]
        assert isinstance(end, EpisodeEnd)
        solution = sum(e.duration_s or 0.0 for e in events if isinstance(e, ToolResult))
        values.append(end.timings.total_s - solution)
    return values


def measure(folder: Path, episodes: int, jobs: int) -> tuple[list[float], float]:
    task_file = folder / "trivial.yaml"
    task_file.write_text(textwrap.dedent(TASK))
    plans = plan_episodes(load_tasks([task_file]), repeats=episodes)
    run = RunDir.create(folder / "runs", RunManifest(run_id=f"j{jobs}"))
    started = time.perf_counter()
    asyncio.run(run_batch(plans, run, run_id=f"j{jobs}", concurrency=jobs))
    elapsed = time.perf_counter() - started
    return overheads(run), episodes / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--episodes", type=int, default=200)
    args = parser.parse_args()
    print(f"{args.episodes} trivial oracle episodes per setting")
    print(f"{'jobs':>4}  {'median overhead':>16}  {'p90 overhead':>13}  {'episodes/s':>10}")
    for jobs in (1, 4):
        with tempfile.TemporaryDirectory() as folder:
            values, rate = measure(Path(folder), args.episodes, jobs)
        median, p90 = statistics.median(values) * 1000, statistics.quantiles(values, n=10)[-1] * 1000
        print(f"{jobs:>4}  {median:>13.1f} ms  {p90:>10.1f} ms  {rate:>10.1f}")


if __name__ == "__main__":
    main()
