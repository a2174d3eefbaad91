"""How long ``coder-eval --version``, ``coder-eval -h`` and a one-episode run take, against a bare
Python start.

Run: ``python benchmarks/cli_startup.py [--repeats 15]``. Each repeat starts, in turn, ``python -c
pass`` (the baseline: the interpreter and site-packages alone), ``coder-eval --version``,
``coder-eval -h``, ``coder-eval run -h``, ``coder-eval run --no-report`` of one trivial ``tempdir``
task (the oracle writes a file, ``file_contains`` grades it; the run is indexed into the store) and
the same run with the statistics stack (SciPy, statsmodels) imported first, as every run imported it
through the store before, as subprocesses of this interpreter's environment; prints the median wall
time of each, the ratio to the baseline, and what each adds to it. The interleaving keeps a load
that changes during the run from favouring one command.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from harness_overhead import write_trivial_task

SCRIPT = Path(sys.executable).parent / "coder-eval"
"""The console script pip installed beside this interpreter (what a user types)."""

COMMANDS: dict[str, list[str]] = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "coder-eval --version": [str(SCRIPT), "--version"],
    "coder-eval -h": [str(SCRIPT), "-h"],
    "coder-eval run -h": [str(SCRIPT), "run", "-h"],
    "run --no-report": [str(SCRIPT), "run", "tasks", "--no-report"],
    "run, SciPy imported first": [
        sys.executable,
        "-c",
        "import sys, scipy.stats, statsmodels.api\nfrom coder_eval.cli import main\nmain(sys.argv[1:])",
        "run",
        "tasks",
        "--no-report",
    ],
}
"""The runs' rows run in a scratch folder holding ``tasks/trivial.yaml``."""


def seconds(command: list[str]) -> float:
    """Wall time of one run of ``command``, which must exit 0."""
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=15)
    options = parser.parse_args()
    if not SCRIPT.exists():
        sys.exit(f"no {SCRIPT}: install coder_eval into this interpreter's environment first")
    scratch = tempfile.TemporaryDirectory(prefix="cli-startup-")
    write_trivial_task(Path(scratch.name) / "tasks")
    os.chdir(scratch.name)
    for command in COMMANDS.values():  # warm the file cache and the bytecode
        seconds(command)
    times: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for _ in range(options.repeats):
        for name, command in COMMANDS.items():
            times[name].append(seconds(command))
    baseline = statistics.median(times["python -c pass"])
    load = os.getloadavg()[0]
    print(f"{options.repeats} repeats, medians (baseline: python -c pass, {baseline:.3f} s; load {load:.1f})")
    for name, values in times.items():
        median = statistics.median(values)
        print(
            f"{name:<26} {median:6.3f} s  {median / baseline:5.1f}x baseline  "
            f"+{median - baseline:.3f} s over it  (min {min(values):.3f} s, max {max(values):.3f} s)"
        )
    scratch.cleanup()


if __name__ == "__main__":
    main()
