"""What the temporary folder's filesystem costs an episode: a sandbox made and removed, a file synced.

coder_eval makes each sandbox under the temporary folder (``$TMPDIR``, else ``/tmp``): its folders
and ``owner.json`` when the episode starts, and removes them, with whatever the agent wrote, when
it ends. How much that costs depends on the filesystem under the folder, far more than on the
harness. On ext4 without a journal, the kernel will not reuse an inode deleted in the last minute
(60 s once its inode table block is written back, up to 360 s while it is not): a new inode is
looked for past each such inode of its block group, and a run of short episodes deletes them by
the thousand.

For the temporary folder, ``/dev/shm`` where there is one, and each ``--folder``, the script names
the filesystem (for ext4, whether it keeps a journal) and prints the median of ``--rounds``:

- a ``tempdir`` sandbox made and closed (``TempdirSandbox.create`` then ``close``: its folders, its
  owner file, its control group where one can be made, removed again), and a file written in its
  workspace in between, as an agent would;
- 4 KB written to a new file and synced to disk (``os.fsync``), as each trajectory is once closed;
- a trivial episode (``vs_inspect.py``'s task: a ``command`` agent writes a file, ``file_contains``
  grades it) through ``run_batch``, its sandbox and run folder under the folder: the wall time of
  ``--episodes`` of them, per episode;

and the ratio of each to the first folder's. ``benchmarks/vs_inspect.py`` names the filesystem too;
``TMPDIR=/dev/shm .venv/bin/python benchmarks/vs_inspect.py`` runs both tools on ``/dev/shm``.

``--held-back N`` measures how long deleted files weigh instead: in a new folder of each, N files
are made and deleted, then the time to create a file there is taken (the mean of 200 creates) at
each of ``--at`` seconds after the deletion, and before it.

    .venv/bin/python benchmarks/temp_folder.py [--rounds 300] [--episodes 200] [--folder DIR]
    .venv/bin/python benchmarks/temp_folder.py --held-back 5000 [--at 2,30,60,90,150] [--folder DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from harness_overhead import write_trivial_task

from coder_eval.episode.plan import plan_episodes
from coder_eval.run.batch import run_batch
from coder_eval.run_dir import RunDir, RunManifest
from coder_eval.sandbox import Provision
from coder_eval.sandbox.tempdir import TempdirSandbox, TempdirSpec
from coder_eval.sandbox.trees import mount_field
from coder_eval.task import load_tasks

JBD2 = Path("/proc/fs/jbd2")


def mount_of(folder: Path) -> tuple[str, str]:
    """(filesystem type, source) of the mount that holds ``folder`` (``/proc/self/mountinfo``)."""
    best = (-1, "unknown", "")
    target = str(folder.resolve())
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        fields = line.split()
        point = mount_field(fields[4])
        kind, source = fields[fields.index("-") + 1 : fields.index("-") + 3]
        if (target == point or target.startswith(point.rstrip("/") + "/")) and len(point) > best[0]:
            best = (len(point), kind, source)
    return best[1], best[2]


def filesystem(folder: Path) -> str:
    """The filesystem ``folder`` is on, and for ext4 whether it keeps a journal.

    Example: ``filesystem(Path("/tmp"))`` -> ``"ext4 without a journal (/dev/vda)"``.
    """
    kind, source = mount_of(folder)
    if kind != "ext4":
        return kind
    device = Path(source).name
    journaled = JBD2.is_dir() and any(entry.name.startswith(f"{device}-") for entry in JBD2.iterdir())
    return f"ext4 {'with' if journaled else 'without'} a journal ({source})"


async def sandbox_cycle(root: Path) -> float:
    """Seconds to make a ``tempdir`` sandbox under ``root``, write a file in it and close it."""
    began = time.perf_counter()
    sandbox = await TempdirSandbox.create(TempdirSpec(), Provision(), base_dir=root)
    await sandbox.write_file("ok.txt", "ok\n")
    await sandbox.close()
    return time.perf_counter() - began


def synced_file(folder: Path, index: int) -> float:
    """Seconds to write 4 KB to a new file in ``folder`` and sync it to disk."""
    began = time.perf_counter()
    descriptor = os.open(folder / f"trajectory-{index}.jsonl", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(descriptor, b"x" * 4096)
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
    return time.perf_counter() - began


def episodes(root: Path, scratch: Path, count: int) -> float:
    """Seconds per trivial episode of ``count`` run at once by ``run_batch``, sandboxes under ``root``
    and the run folder in ``scratch``."""
    agent = {"type": "command", "command": "echo ok > ok.txt"}
    plans = plan_episodes(load_tasks([write_trivial_task(scratch, agent=agent)]), repeats=count)
    run = RunDir.create(scratch / "runs", RunManifest(run_id="temp-folder"))
    before, tempfile.tempdir = tempfile.tempdir, str(root)  # sandbox_root() is the temporary folder
    try:
        began = time.perf_counter()
        asyncio.run(run_batch(plans, run, run_id="temp-folder", concurrency=1))
        return (time.perf_counter() - began) / count
    finally:
        tempfile.tempdir = before


def measure(root: Path, rounds: int, count: int) -> tuple[float, float, float]:
    """Median seconds of a sandbox's cycle and of a synced file, and seconds per episode, under ``root``."""
    scratch = Path(tempfile.mkdtemp(prefix="temp-folder-", dir=root))
    try:
        cycles = asyncio.run(_cycles(root, rounds))
        syncs = [synced_file(scratch, index) for index in range(rounds)]
        episode = episodes(root, scratch, count)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return statistics.median(cycles), statistics.median(syncs), episode


async def _cycles(root: Path, rounds: int) -> list[float]:
    return [await sandbox_cycle(root) for _ in range(rounds)]


def folders(extra: list[Path]) -> list[Path]:
    """The temporary folder, ``/dev/shm`` when it can be written, then each of ``extra``."""
    found = [Path(tempfile.gettempdir()).resolve()]
    for folder in [Path("/dev/shm"), *extra]:
        usable = folder.is_dir() and os.access(folder, os.W_OK)
        if usable and folder.resolve() not in found:
            found.append(folder.resolve())
    return found


def create(paths: list[Path]) -> None:
    """Create each of ``paths``, empty."""
    for path in paths:
        os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))


def create_cost(folder: Path, probes: int = 200) -> float:
    """Mean seconds to create an empty file in ``folder`` (the files are deleted again, untimed)."""
    names = [folder / f"probe-{time.monotonic_ns()}-{index}" for index in range(probes)]
    began = time.perf_counter()
    create(names)
    cost = (time.perf_counter() - began) / probes
    for name in names:
        name.unlink()
    return cost


def held_back(root: Path, deleted: int, at: list[float]) -> list[float]:
    """Seconds to create a file in a new folder under ``root``: before ``deleted`` files made there are
    deleted, then at each of ``at`` seconds after."""
    folder = Path(tempfile.mkdtemp(prefix="temp-folder-", dir=root))
    try:
        made = [folder / f"deleted-{index}" for index in range(deleted)]
        create(made)
        costs = [create_cost(folder)]
        for name in made:
            name.unlink()
        gone = time.monotonic()
        for seconds in at:
            time.sleep(max(0.0, gone + seconds - time.monotonic()))
            costs.append(create_cost(folder))
        return costs
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def seconds_list(text: str) -> list[float]:
    """``--at``: seconds after the deletion, comma-separated, each 0 or more, in increasing order."""
    try:
        seconds = [float(part) for part in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: give seconds separated by commas, as 2,30,60") from None
    if any(b < 0 for b in seconds) or seconds != sorted(seconds):
        raise argparse.ArgumentTypeError(f"{text!r}: give seconds of 0 or more, in increasing order")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--rounds", type=int, default=300, help="sandboxes and synced files per folder")
    parser.add_argument("--episodes", type=int, default=200, help="trivial episodes per folder")
    parser.add_argument("--folder", type=Path, action="append", default=[], help="another folder to measure")
    parser.add_argument("--held-back", type=int, metavar="N", help="time creates after deleting N files")
    parser.add_argument(
        "--at", type=seconds_list, default="2,30,60,90,150", help="seconds after the deletion (--held-back)"
    )
    args = parser.parse_args()
    if args.held_back is not None:
        report_held_back(folders(args.folder), args.held_back, args.at)
        return
    print(
        f"median of {args.rounds}: a tempdir sandbox made, written in and closed; 4 KB written and synced;"
        f" then {args.episodes} trivial episodes, per episode"
    )
    print(f"{'folder':<16}  {'sandbox':>15}  {'synced':>15}  {'episode':>15}  filesystem")
    first: tuple[float, ...] | None = None
    for root in folders(args.folder):
        found = measure(root, args.rounds, args.episodes)
        first = first or found
        cells = "  ".join(
            f"{value * 1e3:>6.2f} ms {value / base:>5.2f}x" for value, base in zip(found, first, strict=True)
        )
        print(f"{root!s:<16}  {cells}  {filesystem(root)}")


def report_held_back(roots: list[Path], deleted: int, at: list[float]) -> None:
    """A row per folder: microseconds per create before the deletion and at each of ``at``."""
    print(f"microseconds to create a file, before and after {deleted} files were deleted in its folder")
    head = "".join(f"{f'{seconds:g} s':>9}" for seconds in at)
    print(f"{'folder':<16}  {'before':>8}{head}  filesystem")
    for root in roots:
        costs = held_back(root, deleted, at)
        cells = f"{costs[0] * 1e6:>8.0f}" + "".join(f"{cost * 1e6:>9.0f}" for cost in costs[1:])
        print(f"{root!s:<16}  {cells}  {filesystem(root)}")


if __name__ == "__main__":
    main()
