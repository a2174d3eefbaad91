"""What a deep tree the agent built costs the harness: one episode per driver, and the host's parts.

For each driver that runs here, one episode whose agent (a command) nests a folder ``--depth`` deep
in its workspace and stops, run as a batch runs it: how the episode ended, the seconds from the
agent's end to the episode's (stop, snapshot, grading, removal) and in all, and whether its sandbox
folders were left on the host. Then the same tree on the host, timed part by part: measured against
the workspace's bounds, written as a snapshot (with the bounds lifted), and removed (against
``shutil.rmtree``, what removed it before, and the system's ``rm -rf``).

    .venv/bin/python benchmarks/agent_trees.py [--depth 1500] [--drivers tempdir,bwrap,docker]
"""

from __future__ import annotations

import argparse
import asyncio
import io
import os
import shutil
import subprocess
import tempfile
import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from coder_eval.episode.plan import plan_episodes
from coder_eval.run.batch import run_batch
from coder_eval.run_dir import RunDir, RunManifest
from coder_eval.sandbox.bwrap import bwrap_problem
from coder_eval.sandbox.docker.engine import engine_problem
from coder_eval.sandbox.snapshot import Bounds, measure, write_tar
from coder_eval.sandbox.spec import Limits
from coder_eval.sandbox.trees import remove_tree
from coder_eval.task import load_tasks
from coder_eval.trajectory import EpisodeEnd, PhaseEvent, read_trajectory

TASK = """
task_id: deep
initial_prompt: nest a folder
agent:
  kind: command
  command: |
    python3 -c '
    import os
    for _ in range({depth}):
        os.mkdir("d"); os.chdir("d")
    '
sandbox: {{driver: {driver}}}
success_criteria: [{{id: leaf, type: run_command, command: "test -f leaf.txt"}}]
"""


def episode(folder: Path, driver: str, depth: int) -> dict[str, Any]:
    """One episode on ``driver``, its sandboxes made in a folder of their own (checked afterwards)."""
    sandboxes = folder / f"sandboxes-{driver}"
    sandboxes.mkdir()
    task_file = folder / f"{driver}.yaml"
    task_file.write_text(textwrap.dedent(TASK.format(driver=driver, depth=depth)))
    run_dir = RunDir.create(folder / f"runs-{driver}", RunManifest(run_id=driver))
    tempfile.tempdir, before = str(sandboxes), tempfile.tempdir
    started = time.perf_counter()
    try:
        asyncio.run(run_batch(plan_episodes(load_tasks([task_file])), run_dir, run_id=driver, concurrency=1))
    finally:
        tempfile.tempdir = before
    total = time.perf_counter() - started
    events = read_trajectory(run_dir.trajectory_paths()[0]).events
    end = events[-1]
    assert isinstance(end, EpisodeEnd), end
    stop = next(e for e in events if isinstance(e, PhaseEvent) and e.name == "stop")
    return {
        "ended": f"{end.outcome} ({end.status})",
        "after_agent_s": (end.ts - stop.ts).total_seconds(),
        "total_s": total,
        "left": len(list(sandboxes.iterdir())),
        "why": (end.error or "")[:90],
    }


def nest(root: Path, depth: int) -> None:
    root.mkdir()
    fd = os.open(root, os.O_RDONLY)
    for _ in range(depth):
        os.mkdir("d", dir_fd=fd)
        fd, old = os.open("d", os.O_RDONLY, dir_fd=fd), fd
        os.close(old)
    os.close(fd)


def timed(step: Callable[[], object]) -> str:
    started = time.perf_counter()
    try:
        step()
    except (RecursionError, OSError, Exception) as exc:  # what each part did with the tree is the result
        return f"{time.perf_counter() - started:.2f} s, {type(exc).__name__}"
    return f"{time.perf_counter() - started:.2f} s"


def host_parts(folder: Path, depth: int) -> dict[str, str]:
    """The host's parts alone on a tree ``depth`` deep (each on a fresh copy), and what removal cost
    before (``shutil.rmtree``, which recursed) and costs the system's own ``rm -rf``."""
    lifted = Limits(max_workspace_mb=None, max_workspace_files=None, max_workspace_depth=None)
    found = {}
    for name, step in (
        ("measure (default bounds)", lambda root: measure(root, Bounds.of(Limits()))),
        ("snapshot (bounds lifted)", lambda root: write_tar(root, io.BytesIO(), bounds=Bounds.of(lifted))),
        ("remove", remove_tree),
        ("remove, before (shutil.rmtree)", shutil.rmtree),
        ("remove, rm -rf", lambda root: subprocess.run(["rm", "-rf", str(root)], check=True)),
    ):
        root = folder / "tree"
        nest(root, depth)
        found[name] = timed(lambda step=step, root=root: step(root))  # type: ignore[misc]
        subprocess.run(["rm", "-rf", str(root)], check=False)
    return found


async def unavailable(driver: str) -> str | None:
    """Why ``driver`` cannot run here, or None."""
    if driver == "bwrap":
        return await bwrap_problem()
    return await engine_problem() if driver == "docker" else None


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--depth", type=int, default=1500)
    parser.add_argument("--drivers", default="tempdir,bwrap,docker")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="agent-trees-") as scratch:
        folder = Path(scratch)
        print(f"a folder nested {args.depth} deep")
        for driver in args.drivers.split(","):
            problem = asyncio.run(unavailable(driver))
            if problem:
                print(f"  {driver}: not available here ({problem})")
                continue
            print(f"  {driver}: {episode(folder, driver, args.depth)}")
        for name, result in host_parts(folder, args.depth).items():
            print(f"  host, {name}: {result}")
        subprocess.run(["rm", "-rf", scratch], check=False)  # whatever a part left, however deep


if __name__ == "__main__":
    main()
