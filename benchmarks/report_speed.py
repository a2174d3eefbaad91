"""How long a run's after-run reports take: one kernel for all of them against one kernel each.

Run: ``python benchmarks/report_speed.py [RUN_DIR] [--repeats 3]`` (default: the demo fixture run
``tests/fixtures/runs/skill-ab``; give the demo's own run, ``runs/latest`` after ``make run``, for
the demo's figures). Each repeat renders the reports ``coder-eval run`` renders after that run (run,
compare, classification, as ``report_jobs`` lists them) twice, in turn: as before, each report in a
kernel of its own (the baseline), and as now, all of them in one kernel (``render_run_reports``).
Each rendering runs in a fresh process, so imports are paid as a run pays them. Prints the median wall
time and CPU time (this process's children: the renderer and its kernels) of each, and their ratios.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

FIXTURE = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "runs" / "skill-ab"
RENDER = """
import sys, warnings
from pathlib import Path
warnings.simplefilter("ignore")
from coder_eval.run.reports import render_run_reports, report_jobs
from coder_eval.run.render import render_report
from coder_eval.run_dir import read_manifest
run, how, out = Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3])
variants = read_manifest(run).variants
if how == "shared":
    outcomes = [(o.template, o.ok) for o in render_run_reports(run, variants, out_dir=out)]
else:
    outcomes = [(j.template, render_report([run], j.template, j.params, j.out_dir).ok)
                for j in report_jobs(run, variants, out)]
assert all(ok for _, ok in outcomes), outcomes
print(len(outcomes))
"""


class Timing(NamedTuple):
    """Wall and CPU seconds of one rendering, and how many reports it wrote."""

    wall: float
    cpu: float
    reports: int


def render(run: Path, how: str, out: Path) -> Timing:
    """Render the run's reports ``how`` ("shared": one kernel; "each": one kernel per report)."""
    before, started = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", RENDER, str(run), how, str(out)],
        capture_output=True,
        text=True,
        check=False,
        env={k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
    )
    wall, after = time.perf_counter() - started, resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"rendering ({how}) failed:\n{done.stderr[-2000:]}")
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return Timing(wall, cpu, int(done.stdout.split()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("run", nargs="?", type=Path, default=FIXTURE)
    parser.add_argument("--repeats", type=int, default=3)
    options = parser.parse_args()
    run = options.run.resolve()
    found: dict[str, list[Timing]] = {"each": [], "shared": []}
    with tempfile.TemporaryDirectory(prefix="report-speed-") as scratch:
        render(run, "shared", Path(scratch) / "warm-up")  # bytecode and page caches
        for i in range(options.repeats):
            for how in found:
                found[how].append(render(run, how, Path(scratch) / f"{how}-{i}"))
    load = os.getloadavg()[0]
    reports = found["shared"][0].reports
    print(f"{reports} reports of {run.name}, median of {options.repeats} (load average {load:.1f})")
    medians = {how: [statistics.median(getattr(t, part) for t in ts) for part in ("wall", "cpu")]
               for how, ts in found.items()}  # fmt: skip
    names = {"each": "a kernel per report (before)", "shared": "one kernel for all (now)"}
    for how, (wall, cpu) in medians.items():
        print(f"{names[how]:<30} {wall:6.1f} s wall  {cpu:6.1f} s CPU")
    (wall_each, cpu_each), (wall_shared, cpu_shared) = medians["each"], medians["shared"]
    print(f"now / before: {wall_shared / wall_each:.2f}x wall, {cpu_shared / cpu_each:.2f}x CPU")


if __name__ == "__main__":
    main()
