"""How long a run's after-run reports take: the renderer as it is against the renderer of a baseline
commit, in the same run, and where the seconds go.

Run: ``python benchmarks/report_speed.py [RUN_DIR] [--repeats 3] [--baseline REV]`` (default: the
demo fixture run ``tests/fixtures/runs/skill-ab``; give the demo's own run, ``runs/latest`` after
``make run``, for the demo's figures). Each repeat renders the reports ``coder-eval run`` renders
after that run (run, compare, classification, as ``report_jobs`` lists them) three ways, in turn:

- ``before``: ``render_run_reports`` of the baseline commit (default ``BASELINE``: one shared
  kernel, papermill's saves before and after every cell, each HTML export after its notebook), its
  ``coder_eval`` and notebooks taken from git into a scratch folder;
- ``now``: ``render_run_reports`` as it is;
- ``prestarted``: the same, handed a kernel started (and warmed) beforehand, as a run that starts it
  while its last episodes finish would: only the time from the call on counts.

Each rendering runs in a fresh process, so imports are paid as a run pays them. Prints the median
wall time and CPU time (this process's children: the renderer and its kernels) of each, the ratios
to ``before``, and the phases of the median ``now`` rendering: the renderer's own imports, the
kernel's start, the wait for the kernel to import the analysis stack, each notebook's cells (those
that drew a figure apart), papermill's time around the cells, and the HTML export left after the
last notebook (the others overlap the next notebook's execution).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, NamedTuple

REPO = Path(__file__).resolve().parent.parent
FIXTURE = REPO / "tests" / "fixtures" / "runs" / "skill-ab"
BASELINE = "b573919"
"""The commit before the renderer's speed-ups (reports in one shared kernel, rendered in turn)."""
HOWS = ("before", "now", "prestarted")
RENDER = """
import json, sys, time, warnings
from datetime import datetime
from pathlib import Path
started = time.time()
warnings.simplefilter("ignore")
from coder_eval.run.reports import render_run_reports
from coder_eval.run_dir import read_manifest
run, mode, out = Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3])
variants = read_manifest(run).variants
if mode == "plain":
    outcomes = render_run_reports(run, variants, out_dir=out)
    assert all(o.ok for o in outcomes), outcomes
    print(json.dumps({}))
    sys.exit()
import coder_eval.run.render as render
import coder_eval.run.report_kernel as rk
marks = {}
def timed(name, f):
    def wrapper(*args, **kwargs):
        t = time.time()
        try:
            return f(*args, **kwargs)
        finally:
            marks.setdefault(name, []).append((t, time.time()))
    return wrapper
render.execute_report = timed("execute", render.execute_report)
render.publish_report = timed("publish", render.publish_report)
rk.ReportKernel.start = timed("start", rk.ReportKernel.start)
kernel = None
if mode == "prestarted":
    kernel = rk.ReportKernel()
    out.mkdir(parents=True)
    kernel.start(out)
    assert kernel.warmed()
    marks.clear()
call = time.time()
outcomes = render_run_reports(run, variants, out_dir=out, kernel=kernel)
end = time.time()
assert all(o.ok for o in outcomes), outcomes
import nbformat
phases = {"renderer's imports (interpreter start-up not counted)": call - started}
phases["kernel start (the renderer waits)"] = sum(b - a for a, b in marks.get("start", []))
for i, (outcome, (a, b)) in enumerate(zip(outcomes, marks["execute"])):
    cells = [c for c in nbformat.read(outcome.html_path.with_suffix(".ipynb"), 4).cells
             if c.cell_type == "code"]
    took = [c.metadata.papermill.duration or 0 for c in cells]
    drew = sum(t for t, c in zip(took, cells) if any("image/png" in o.get("data", {}) for o in c.outputs))
    first = datetime.fromisoformat(cells[0].metadata.papermill.start_time).timestamp()
    if i == 0:
        phases["wait for the kernel's imports (before the first cell)"] = first - a
    name = outcome.template
    phases[f"{name}: cells without figures"] = sum(took) - drew
    phases[f"{name}: cells that drew a figure"] = drew
    phases[f"{name}: papermill around the cells"] = (b - a) - sum(took) - (first - a if i == 0 else 0)
phases["HTML exports, in a thread (overlapping the above)"] = sum(b - a for a, b in marks["publish"])
phases["after the last notebook: its export, shutdown"] = end - marks["execute"][-1][1]
phases["total from the call"] = end - call
if mode == "prestarted":
    phases = {"counted": end - call}
print(json.dumps(phases))
"""


class Timing(NamedTuple):
    """Wall and CPU seconds of one rendering, and its phases (``now`` only)."""

    wall: float
    cpu: float
    phases: dict[str, Any]


def baseline_tree(rev: str, scratch: Path) -> Path:
    """``coder_eval`` of commit ``rev``, with its notebooks where the installed package has them."""
    tree = scratch / "baseline"
    tree.mkdir()
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", rev, "coder_eval", "notebooks"], capture_output=True, check=True
    )
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive.stdout, check=True)
    (tree / "notebooks").rename(tree / "coder_eval" / "notebooks")
    return tree


def render(run: Path, how: str, out: Path, baseline: Path) -> Timing:
    """Render the run's reports ``how`` (one of ``HOWS``) in a fresh process."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    if how == "before":
        env["PYTHONPATH"] = str(baseline)  # its kernel inherits it: the baseline's notebooks run there
    mode = "plain" if how == "before" else how
    before, started = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", RENDER, str(run), mode, str(out)],
        capture_output=True, text=True, check=False, env=env, cwd=out.parent,
    )  # fmt: skip
    wall, after = time.perf_counter() - started, resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"rendering ({how}) failed:\n{done.stderr[-2000:]}")
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    phases: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return Timing(phases.pop("counted", wall), cpu, phases)


def print_phases(phases: dict[str, Any]) -> None:
    """The phases of one ``now`` rendering, in seconds."""
    print("phases of the median 'now' rendering (s):")
    for name, seconds in phases.items():
        print(f"  {name:<58} {seconds:6.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("run", nargs="?", type=Path, default=FIXTURE)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--baseline", default=BASELINE, help="The git revision measured as 'before'.")
    options = parser.parse_args()
    run = options.run.resolve()
    found: dict[str, list[Timing]] = {how: [] for how in HOWS}
    with tempfile.TemporaryDirectory(prefix="report-speed-") as folder:
        scratch = Path(folder)
        baseline = baseline_tree(options.baseline, scratch)
        for how in HOWS:  # bytecode and page caches
            render(run, how, scratch / f"warm-up-{how}", baseline)
        for i in range(options.repeats):
            for how in HOWS:
                found[how].append(render(run, how, scratch / f"{how}-{i}", baseline))
    load = os.getloadavg()[0]
    print(f"reports of {run.name}, median of {options.repeats} (load average {load:.1f})")
    names = {
        "before": f"before ({options.baseline})",
        "now": "now",
        "prestarted": "now, kernel started beforehand",
    }
    medians = {how: (statistics.median(t.wall for t in ts), statistics.median(t.cpu for t in ts))
               for how, ts in found.items()}  # fmt: skip
    for how, (wall, cpu) in medians.items():
        ratio = f"{wall / medians['before'][0]:.2f}x wall" if how != "before" else ""
        print(f"{names[how]:<32} {wall:6.1f} s wall  {cpu:6.1f} s CPU  {ratio}")
    now = sorted(found["now"], key=lambda t: t.wall)[len(found["now"]) // 2]
    print_phases(now.phases)


if __name__ == "__main__":
    main()
