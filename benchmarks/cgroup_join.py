"""What joining a sandbox's control group costs a command, by the time since the last join.

Every command of a ``tempdir`` or ``bwrap`` sandbox with a control group starts by moving itself
into the group (``Cgroup.enter``). The kernel write-locks a global lock for each such move
(``cgroup_threadgroup_rwsem``); where the hierarchies are mounted without ``favordynmods`` (cgroup v1,
and v2 by default), the first move after a quiet spell waits for an RCU grace period, and moves that
follow within the grace period do not. So a run of back-to-back trivial episodes pays little, and an
episode that runs for seconds (an agent's CLI) pays the whole wait once per command it starts.

For each gap (0, 10, 30, 100 and 300 ms of sleep before the command), the same command is started
bare and through ``Cgroup.enter``, alternating, in a fresh group each time; the script prints the
median of each, the median of the paired differences (the join's cost) and how the hierarchies are
mounted. It needs a control group it may make (root, or a delegated v2 subtree).

    .venv/bin/python benchmarks/cgroup_join.py [--rounds 30]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import time
import uuid
from pathlib import Path

from coder_eval.sandbox.cgroups import ROOT, Cgroup
from coder_eval.sandbox.spec import Limits

GAPS_MS = (0, 10, 30, 100, 300)
COMMAND = ["/bin/bash", "-c", "true"]


def started(argv: list[str]) -> float:
    """Seconds to start ``argv`` and see it exit (it must succeed)."""
    began = time.perf_counter()
    subprocess.run(argv, check=True, stdin=subprocess.DEVNULL)
    return time.perf_counter() - began


def mounts() -> str:
    """How the control-group hierarchies are mounted (``/proc/mounts``), one line."""
    found = {
        fields[1].removeprefix(f"{ROOT}/") or "/": fields[3]
        for line in Path("/proc/mounts").read_text().splitlines()
        if (fields := line.split())[2] in ("cgroup", "cgroup2")
    }
    favoured = [name for name, options in found.items() if "favordynmods" in options.split(",")]
    kind = "cgroup v2" if (ROOT / "cgroup.controllers").is_file() else "cgroup v1"
    return f"{kind}; favordynmods on: {', '.join(favoured) or 'none'}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=30, help="commands of each kind per gap (default 30)")
    args = parser.parse_args()
    limits = Limits()  # a task's defaults: the pids and memory hierarchies
    probe = Cgroup.make(f"join-probe-{uuid.uuid4().hex}", limits)
    if probe is None:
        raise SystemExit("no control group can be made here (run as root, or in a delegated v2 subtree)")
    probe.remove()
    print(f"{COMMAND} started bare and joining a fresh control group, {args.rounds} of each per gap")
    print(mounts())
    print(f"{'gap':>6}  {'bare':>8}  {'joining':>8}  {'join (paired)':>13}")
    for gap in GAPS_MS:
        bare, joined, extra = [], [], []
        for _ in range(args.rounds):
            group = Cgroup.make(f"join-{uuid.uuid4().hex}", limits)
            assert group is not None
            try:
                time.sleep(gap / 1000)
                b = started(COMMAND)
                time.sleep(gap / 1000)
                j = started(group.enter(COMMAND))
            finally:
                group.remove()
            bare.append(b)
            joined.append(j)
            extra.append(j - b)
        row = (statistics.median(bare), statistics.median(joined), statistics.median(extra))
        print(
            f"{gap:>4} ms  "
            + "  ".join(f"{1000 * v:>{w}.2f}" for v, w in zip(row, (5, 5, 10), strict=True))
            + "  (ms)"
        )


if __name__ == "__main__":
    main()
