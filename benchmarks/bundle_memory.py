"""How much memory packing a task folder takes: streamed into its bundle file, against holding the
file whole (as packing into memory did).

Run: ``python benchmarks/bundle_memory.py [--mb 256]``. Writes a task folder holding one file of
``--mb`` MB of random bytes (they do not compress), then measures the peak resident memory of three
child processes, each after importing coder_eval's bundles: doing nothing more (the floor),
``pack_file`` of the folder into a bundle on disk (what a run does before its first episode; the
cap, ``CODER_EVAL_BUNDLE_MAX_MB``, lifted), and reading the file whole into memory. Prints each
peak and, above the floor, the ratio streamed / whole.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

STEPS = {
    "floor": "pass",
    "streamed": "bundles.pack_file(folder, out / 'b.tar.gz')",
    "whole": "data = (folder / 'big.bin').read_bytes()",
}
CHILD = """
import resource, sys
from pathlib import Path
import coder_eval.executors.dask.bundles as bundles
folder, out = Path(sys.argv[1]), Path(sys.argv[2])
{step}
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def peak_mb(step: str, folder: Path, out: Path) -> tuple[float, float]:
    """(peak resident MB, seconds) of a child that runs ``step``."""
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", CHILD.format(step=step), str(folder), str(out)],
        capture_output=True, text=True, check=True, env={**os.environ, "CODER_EVAL_BUNDLE_MAX_MB": "1000000"},
    )  # fmt: skip
    return int(done.stdout.split()[-1]) / 1024, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=256)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        folder, out = Path(scratch) / "task", Path(scratch) / "out"
        folder.mkdir()
        out.mkdir()
        (folder / "task.yaml").write_text("task_id: big\ninitial_prompt: hi\n")
        with (folder / "big.bin").open("wb") as handle:
            for _ in range(args.mb):
                handle.write(os.urandom(1024 * 1024))
        peaks = {name: peak_mb(step, folder, out) for name, step in STEPS.items()}
    floor = peaks["floor"][0]
    for name, (peak, seconds) in peaks.items():
        print(f"{name:>9}: peak {peak:7.1f} MB ({peak - floor:+7.1f} over the floor), {seconds:5.1f} s")
    ratio = (peaks["streamed"][0] - floor) / max(peaks["whole"][0] - floor, 1e-9)
    print(f"a {args.mb} MB file: streamed / whole, above the floor: {ratio:.3f}")


if __name__ == "__main__":
    main()
