"""What keeping workspace snapshots costs, and how long a re-grade takes against the run it re-grades.

Run: ``python benchmarks/regrade_speed.py [--experiment experiments/skills_ab.yaml] [-j 4] [--tags api]``.
Runs the experiment (the offline skill A/B demo by default: the real Claude Code CLI against the
scripted model server) through ``coder-eval run`` into a temporary folder, then re-grades it as
recorded with ``coder-eval regrade`` (no report rendered by either). Prints, per episode, the size and
the time of its kept snapshot (median and largest, from each ``episode_end.snapshot``), the run's and
the re-grade's wall time (process start to exit) and their ratio, and checks that the re-grade
reproduced every outcome. First, the floor: the median time to keep a one-file workspace.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from coder_eval.episode.snapshots import MB, SnapshotTarget, keep_snapshot
from coder_eval.sandbox.snapshot import write_tar
from coder_eval.trajectory import EpisodeEnd, read_trajectory

REPO = Path(__file__).resolve().parent.parent


def timed(args: list[str]) -> float:
    """Wall seconds of one ``coder-eval`` command (it must exit 0 or 1, a failed gate)."""
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "coder_eval", *args], cwd=REPO, capture_output=True, text=True
    )
    if done.returncode not in (0, 1):
        raise SystemExit(f"coder-eval {' '.join(args)} exited {done.returncode}:\n{done.stderr[-2000:]}")
    return time.perf_counter() - started


def ends(run: Path) -> dict[str, EpisodeEnd]:
    found = {}
    for path in sorted((run / "episodes").glob("*.jsonl")):
        end = read_trajectory(path).end
        if end is not None:
            found[path.stem] = end
    return found


def trivial_snapshot_ms(repeats: int = 50) -> float:
    """Median milliseconds ``keep_snapshot`` takes for a workspace holding one small file."""
    with tempfile.TemporaryDirectory(prefix="regrade-speed-") as scratch:
        work, tar = Path(scratch) / "work", Path(scratch) / "work.tar"
        work.mkdir()
        (work / "hello.txt").write_text("hello\n")
        with tar.open("wb") as out:
            write_tar(work, out)
        times = []
        for n in range(repeats):
            started = time.perf_counter()
            keep_snapshot(tar, SnapshotTarget(Path(scratch) / "snapshots" / f"{n}.tar.gz", 10 * MB))
            times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--experiment", default="experiments/skills_ab.yaml")
    parser.add_argument("-j", "--jobs", type=int, default=4)
    parser.add_argument("--tags", nargs="*", default=[])
    options = parser.parse_args()
    print(f"keeping a one-file workspace: median {trivial_snapshot_ms():.2f} ms")
    with tempfile.TemporaryDirectory(prefix="regrade-speed-") as scratch:
        run, again = Path(scratch) / "run", Path(scratch) / "again"
        tags = [arg for tag in options.tags for arg in ("--tags", tag)]
        jobs = ["-j", str(options.jobs)]
        run_s = timed(
            ["run", "--experiment", options.experiment, *tags, *jobs, "--run-dir", str(run), "--no-report"]
        )
        regrade_s = timed(["regrade", str(run), "--run-dir", str(again), *jobs, "--no-report"])
        before, after = ends(run), ends(again)
        snapshots = [e.snapshot for e in before.values() if e.snapshot is not None and e.snapshot.file]
        sizes = [s.bytes for s in snapshots]
        seconds = [s.seconds * 1000 for s in snapshots]
        same = sum(before[k].outcome == after[k].outcome for k in before)
        kb = [size / 1000 for size in sizes]
        print(f"episodes: {len(before)}  snapshots kept: {len(snapshots)}", end="  ")
        print(f"re-grade reproduced {same}/{len(before)} outcomes")
        print(
            f"snapshot size per episode: median {statistics.median(kb):.1f} kB, largest {max(kb):.1f} kB",
            end=", ",
        )
        print(f"total {sum(kb) / 1000:.2f} MB")
        ms = statistics.median(seconds), max(seconds)
        print(f"snapshot time per episode: median {ms[0]:.1f} ms, largest {ms[1]:.1f} ms")
        print(f"run: {run_s:.1f} s  regrade: {regrade_s:.1f} s  regrade / run: {regrade_s / run_s:.1%}")


if __name__ == "__main__":
    main()
