"""What isolation costs per episode: bwrap and docker against tempdir, and the verifier's own share.

Runs N trivial oracle episodes (write a file, check it) on each driver that runs here, one at a time,
and prints, per driver, the median wall time per episode and of each phase, the ratio to tempdir, and
the verifier's overhead: what the stop and verify phases cost beyond running the criterion itself
(snapshot, a fresh sandbox from it, its removal), measured on the same episodes. For docker it also
prints the median cost of one container (made, seeded and started; then removed), of one command in
it, and the time to build the default image from this machine's packages (into a throwaway tag).

    .venv/bin/python benchmarks/isolation_overhead.py --episodes 100
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import tempfile
import textwrap
import time
from pathlib import Path

from coder_eval.episode.plan import plan_episodes
from coder_eval.run.batch import run_batch
from coder_eval.run_dir import RunDir, RunManifest
from coder_eval.sandbox import DockerSandbox, DockerSpec, Provision, resolve_driver
from coder_eval.sandbox.docker.base_image import build_base_image
from coder_eval.sandbox.docker.engine import engine_problem
from coder_eval.task import load_tasks
from coder_eval.trajectory import CriterionResult, EpisodeEnd, read_trajectory

TASK = """
task_id: trivial
initial_prompt: write ok
agent: {{kind: oracle}}
sandbox: {{driver: {driver}}}
reference_solution: echo ok > ok.txt
success_criteria:
  - {{type: file_contains, path: ok.txt, includes: [ok]}}
"""
PHASES = ("setup_s", "agent_s", "stop_s", "verify_s", "end_s", "total_s")


def run(folder: Path, driver: str, episodes: int) -> list[tuple[EpisodeEnd, float]]:
    """Each episode's end and the seconds its criterion took (timestamps of the verify phase)."""
    task_file = folder / f"{driver}.yaml"
    task_file.write_text(textwrap.dedent(TASK.format(driver=driver)))
    plans = plan_episodes(load_tasks([task_file]), repeats=episodes)
    run_dir = RunDir.create(folder / "runs", RunManifest(run_id=driver))
    asyncio.run(run_batch(plans, run_dir, run_id=driver, concurrency=1))
    found = []
    for path in run_dir.trajectory_paths():
        events = read_trajectory(path).events
        end = events[-1]
        assert isinstance(end, EpisodeEnd) and end.outcome == "pass", end
        verdict = next(e for e in events if isinstance(e, CriterionResult))
        phase = next(e for e in events if getattr(e, "name", None) == "verify")
        found.append((end, (verdict.ts - phase.ts).total_seconds()))
    return found


def container_costs(rounds: int) -> dict[str, float]:
    """Median seconds to make a docker sandbox, to run one command in it, and to remove it."""
    made, command, removed = [], [], []

    async def one() -> None:
        started = time.perf_counter()
        sandbox = await DockerSandbox.create(DockerSpec(), Provision())
        made.append(time.perf_counter() - started)
        started = time.perf_counter()
        await sandbox.exec("true")
        command.append(time.perf_counter() - started)
        started = time.perf_counter()
        await sandbox.close()
        removed.append(time.perf_counter() - started)

    for _ in range(rounds):
        asyncio.run(one())
    return {k: statistics.median(v) for k, v in (("create", made), ("exec", command), ("close", removed))}


def image_build_s() -> float:
    """Seconds to build the default image from this machine's packages (a throwaway tag, removed)."""
    tag = "coder-eval/base-benchmark:throwaway"
    started = time.perf_counter()
    build_base_image("host", tag)
    elapsed = time.perf_counter() - started
    subprocess.run(["docker", "rmi", "--force", tag], capture_output=True, check=False)
    return elapsed


def drivers_here() -> list[str]:
    drivers = ["tempdir"]
    if asyncio.run(resolve_driver("auto"))[0] == "bwrap":
        drivers.append("bwrap")
    else:
        print("bwrap cannot run here: it is not measured")
    problem = asyncio.run(engine_problem())
    if problem is None:
        drivers.append("docker")
    else:
        print(f"docker cannot run here ({problem}): it is not measured")
    return drivers


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--episodes", type=int, default=100)
    args = parser.parse_args()
    drivers = drivers_here()
    medians: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as scratch:
        for driver in drivers:
            started = time.perf_counter()
            results = run(Path(scratch), driver, args.episodes)
            elapsed = time.perf_counter() - started
            timings = [end.timings.model_dump() for end, _ in results]
            medians[driver] = {p: statistics.median(t[p] for t in timings) for p in PHASES}
            verifier = [
                t["stop_s"] + t["verify_s"] + t["end_s"] - grade
                for t, (_, grade) in zip(timings, results, strict=True)
            ]
            medians[driver]["verifier_s"] = statistics.median(verifier)
            print(f"{driver}: {args.episodes} episodes in {elapsed:.1f} s ({args.episodes / elapsed:.1f}/s)")
    print()
    others = [d for d in drivers if d != "tempdir"]
    print(
        f"{'median ms':<12}"
        + "".join(f"{d:>10}" for d in drivers)
        + "".join(f"{d + '/tempdir':>16}" for d in others)
    )
    for key in (*PHASES, "verifier_s"):
        row = f"{key.removesuffix('_s'):<12}" + "".join(f"{medians[d][key] * 1000:>10.1f}" for d in drivers)
        for driver in others:
            base = medians["tempdir"][key]
            row += f"{medians[driver][key] / base:>15.2f}x" if base else f"{'-':>16}"
        print(row)
    print("\nverifier: snapshot + fresh sandbox + removal, beyond the criterion's own time (target < 50 ms)")
    if "docker" in drivers:
        costs = container_costs(max(3, min(args.episodes, 20)))
        print(
            f"\ndocker, median of {max(3, min(args.episodes, 20))}: a container made, seeded and started "
            f"{costs['create'] * 1000:.0f} ms, one command {costs['exec'] * 1000:.0f} ms, removed "
            f"{costs['close'] * 1000:.0f} ms"
        )
        print(f"default image built from this machine's packages in {image_build_s():.1f} s")


if __name__ == "__main__":
    main()
