"""What ``sandbox.python`` costs per episode: the first build, then a copy per sandbox.

Runs N trivial oracle episodes of one task with ``sandbox.python: {env_packages: [...]}`` and N of
the same task without it, one at a time, and prints the first episode's set-up (which builds the
environment), the median set-up and whole-episode time after it, and the median extra time an
episode with the environment costs (its agent's and its verifier's copies). The packages are
installed offline from wheels of this machine's own installed distributions.

    .venv/bin/python benchmarks/package_envs.py --episodes 20 --packages rich
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import textwrap
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from coder_eval.episode.plan import plan_episodes
from coder_eval.run.batch import run_batch
from coder_eval.run_dir import RunDir, RunManifest
from coder_eval.sandbox import resolve_driver
from coder_eval.task import load_tasks
from coder_eval.trajectory import EpisodeEnd, read_trajectory
from tests.wheelhouse import wheelhouse

TASK = """
task_id: {name}
initial_prompt: write ok
agent: {{type: oracle}}
sandbox: {{driver: {driver}{python}}}
reference_solution: python -c "import {module}" && echo ok > ok.txt
success_criteria:
  - {{type: file_contains, path: ok.txt, includes: [ok]}}
"""


def run(folder: Path, name: str, driver: str, python: str, module: str, episodes: int) -> list[EpisodeEnd]:
    """The ends of ``episodes`` episodes of the task, in the order they ran."""
    task_file = folder / f"{name}.yaml"
    task_file.write_text(textwrap.dedent(TASK.format(name=name, driver=driver, python=python, module=module)))
    plans = plan_episodes(load_tasks([task_file]), repeats=episodes)
    run_dir = RunDir.create(folder / f"runs-{name}", RunManifest(run_id=name))
    asyncio.run(run_batch(plans, run_dir, run_id=name, concurrency=1))
    ends = []
    for path in run_dir.trajectory_paths():
        end = read_trajectory(path).events[-1]
        assert isinstance(end, EpisodeEnd) and end.outcome == "pass", end
        ends.append(end)
    return sorted(ends, key=lambda e: e.ts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--episodes", type=int, default=20)
    parser.add_argument("--packages", nargs="+", default=["rich"])
    parser.add_argument("--driver", default="auto", help="tempdir copies each tree; bwrap links to the cache")
    args = parser.parse_args()
    driver = asyncio.run(resolve_driver(args.driver))[0]
    module = args.packages[0].replace("-", "_")
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        wheels = wheelhouse(args.packages, folder / "wheels")
        os.environ.update(PIP_NO_INDEX="1", PIP_FIND_LINKS=str(folder / "wheels"))
        packages = ", ".join(args.packages)
        started = time.perf_counter()
        with_env = run(
            folder, "with_env", driver, f", python: {{env_packages: [{packages}]}}", module, args.episodes
        )
        elapsed = time.perf_counter() - started
        without = run(folder, "without", driver, "", "json", args.episodes)
        size = sum(f.stat().st_size for f in wheels) / 1e6
    print(
        f"driver {driver}; packages: {packages} ({len(wheels)} wheels, {size:.1f} MB); "
        f"{args.episodes} episodes each"
    )
    print(f"with the environment: {elapsed:.1f} s in all")
    print(f"first episode's set-up (builds the environment): {with_env[0].timings.setup_s:.2f} s")
    rows = {"set-up": "setup_s", "verify": "verify_s", "episode": "total_s"}
    for label, field in rows.items():
        env = statistics.median(getattr(e.timings, field) for e in with_env[1:])
        base = statistics.median(getattr(e.timings, field) for e in without[1:])
        print(f"median {label} after the first: {env:.3f} s with, {base:.3f} s without (+{env - base:.3f} s)")


if __name__ == "__main__":
    main()
