"""What isolation costs per episode: bwrap against tempdir, and the verifier's own share.

Runs N trivial oracle episodes (write a file, check it) on each driver, one at a time, and prints,
per driver, the median wall time per episode and of each phase, the ratio to tempdir, and the
verifier's overhead: what the stop and verify phases cost beyond running the criterion itself
(snapshot, a fresh sandbox from it, its removal), measured on the same episodes.

    .venv/bin/python benchmarks/isolation_overhead.py --episodes 100
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
from coder_eval.sandbox import resolve_driver
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--episodes", type=int, default=100)
    args = parser.parse_args()
    drivers = ["tempdir"]
    if asyncio.run(resolve_driver("auto"))[0] == "bwrap":
        drivers.append("bwrap")
    else:
        print("bwrap cannot run here: only tempdir is measured")
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
    header = (
        f"{'median ms':<12}"
        + "".join(f"{d:>10}" for d in drivers)
        + ("   bwrap/tempdir" if len(drivers) > 1 else "")
    )
    print(header)
    for key in (*PHASES, "verifier_s"):
        row = f"{key.removesuffix('_s'):<12}" + "".join(f"{medians[d][key] * 1000:>10.1f}" for d in drivers)
        if len(drivers) > 1 and medians["tempdir"][key]:
            row += f"   {medians['bwrap'][key] / medians['tempdir'][key]:>12.2f}x"
        print(row)
    print("\nverifier: snapshot + fresh sandbox + removal, beyond the criterion's own time (target < 50 ms)")


if __name__ == "__main__":
    main()
