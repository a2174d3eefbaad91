"""Harness overhead per episode: wall time minus the time the reference solution itself took.

Runs N trivial oracle episodes (default 200; the task writes a file and checks it) at -j 1 and at
-j 4 and prints the median and p90 overhead per episode and the episodes per second of each, then
the median time of each phase at -j 1 (where an episode's time goes).

    .venv/bin/python benchmarks/harness_overhead.py --episodes 200 [--driver tempdir]

``write_trivial_task`` is the task every per-episode benchmark shares (``vs_inspect.py`` too).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

from coder_eval.episode.plan import plan_episodes
from coder_eval.run.batch import run_batch
from coder_eval.run_dir import RunDir, RunManifest
from coder_eval.task import load_tasks
from coder_eval.trajectory import EpisodeEnd, ToolResult, read_trajectory

ORACLE = {"type": "oracle"}
PHASES = ("setup_s", "agent_s", "stop_s", "verify_s", "end_s", "total_s")


def write_trivial_task(folder: Path, *, driver: str = "tempdir", agent: dict[str, Any] | None = None) -> Path:
    """``folder/trivial.yaml``: write ``ok`` to ``ok.txt`` (by default the oracle runs the reference
    solution), graded by ``file_contains``, on ``driver``."""
    task = {
        "task_id": "trivial",
        "initial_prompt": "write ok to ok.txt",
        "agent": agent or ORACLE,
        "sandbox": {"driver": driver},
        "reference_solution": "echo ok > ok.txt",
        "success_criteria": [{"type": "file_contains", "path": "ok.txt", "includes": ["ok"]}],
    }
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "trivial.yaml"
    path.write_text(yaml.safe_dump(task, sort_keys=False), encoding="utf-8")
    return path


def ends(run: RunDir) -> list[tuple[EpisodeEnd, float]]:
    """Each episode's end and the reference solution's own command time."""
    found = []
    for path in run.trajectory_paths():
        events = read_trajectory(path).events
        end = events[-1]
        assert isinstance(end, EpisodeEnd) and end.outcome == "pass", end
        found.append((end, sum(e.duration_s or 0.0 for e in events if isinstance(e, ToolResult))))
    return found


def measure(
    folder: Path, episodes: int, jobs: int, driver: str
) -> tuple[list[tuple[EpisodeEnd, float]], float]:
    """Run the trivial task ``episodes`` times at ``-j jobs``: each end with its solution time, and
    episodes per second."""
    plans = plan_episodes(load_tasks([write_trivial_task(folder, driver=driver)]), repeats=episodes)
    run = RunDir.create(folder / "runs", RunManifest(run_id=f"j{jobs}"))
    started = time.perf_counter()
    asyncio.run(run_batch(plans, run, run_id=f"j{jobs}", concurrency=jobs))
    elapsed = time.perf_counter() - started
    return ends(run), episodes / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--episodes", type=int, default=200)
    parser.add_argument("--driver", default="tempdir")
    args = parser.parse_args()
    print(f"{args.episodes} trivial oracle episodes per setting, driver {args.driver}")
    print(f"{'jobs':>4}  {'median overhead':>16}  {'p90 overhead':>13}  {'episodes/s':>10}")
    phases = {}
    for jobs in (1, 4):
        with tempfile.TemporaryDirectory() as folder:
            found, rate = measure(Path(folder), args.episodes, jobs, args.driver)
        values = [end.timings.total_s - solution for end, solution in found]
        median, p90 = statistics.median(values) * 1000, statistics.quantiles(values, n=10)[-1] * 1000
        print(f"{jobs:>4}  {median:>13.1f} ms  {p90:>10.1f} ms  {rate:>10.1f}")
        if jobs == 1:
            phases = {name: statistics.median(getattr(e.timings, name) for e, _ in found) for name in PHASES}
    print("median per phase at -j 1: " + ", ".join(f"{k[:-2]} {1000 * v:.1f} ms" for k, v in phases.items()))


if __name__ == "__main__":
    main()
