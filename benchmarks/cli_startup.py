"""How long ``coder-eval --version`` and ``coder-eval -h`` take, against a bare Python start.

Run: ``python benchmarks/cli_startup.py [--repeats 15]``. Each repeat starts, in turn, ``python -c
pass`` (the baseline: the interpreter and site-packages alone), ``coder-eval --version``,
``coder-eval -h`` and ``coder-eval run -h`` as subprocesses of this interpreter's environment; prints
the median wall time of each, the ratio to the baseline, and what each adds to it. The interleaving
keeps a load that changes during the run from favouring one command.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

SCRIPT = Path(sys.executable).parent / "coder-eval"
"""The console script pip installed beside this interpreter (what a user types)."""

COMMANDS: dict[str, list[str]] = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "coder-eval --version": [str(SCRIPT), "--version"],
    "coder-eval -h": [str(SCRIPT), "-h"],
    "coder-eval run -h": [str(SCRIPT), "run", "-h"],
}


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
    for command in COMMANDS.values():  # warm the file cache and the bytecode
        seconds(command)
    times: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for _ in range(options.repeats):
        for name, command in COMMANDS.items():
            times[name].append(seconds(command))
    baseline = statistics.median(times["python -c pass"])
    print(f"{options.repeats} repeats, medians (baseline: python -c pass, {baseline:.3f} s)")
    for name, values in times.items():
        median = statistics.median(values)
        print(
            f"{name:<22} {median:6.3f} s  {median / baseline:5.1f}x baseline  "
            f"+{median - baseline:.3f} s over it  (min {min(values):.3f} s, max {max(values):.3f} s)"
        )


if __name__ == "__main__":
    main()
