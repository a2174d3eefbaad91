"""What an agent's floods cost the harness, bounded (now) against unbounded (the bounds lifted).

Each attack runs against the harness's own parts (the clients in another process, so only the
harness is measured; each memory figure in a fresh process, so no earlier attack's freed memory is
counted), once with coder_eval's bounds and once with them lifted to what it did before they
existed, and prints both and their ratio:

- 40 connections of 15 MiB to the CLI recorder: the harness's peak resident memory growth;
- 20 requests of 15 MiB to the scripted model server (and, bounded, 20 of just under its 8 MiB cap);
- a workspace of 100,000 empty files: the time until its snapshot is refused (unbounded: written);
- sparse files of 3 x 900 MB: the same, and the bytes spooled;
- 2 GB on a command's stdout: the bytes the harness wrote to disk to capture it, and the time.

    .venv/bin/python benchmarks/harness_costs.py [--files 100000] [--flood-mb 2048]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from coder_eval.sandbox import FakeSandbox, recording
from coder_eval.sandbox.process import run_in_group
from coder_eval.sandbox.recording import RecordingHost
from coder_eval.sandbox.snapshot import Bounds, WorkspaceTooLarge, write_tar
from coder_eval.sandbox.spec import CliRecorder, Limits
from coder_eval.scripted import ScriptedServer, handler
from coder_eval.scripted import server as server_module

MB = 1024 * 1024
CLIENT = r"""
import json, socket, sys, threading
kind, address, count, size = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
if kind == "recorder":
    request = {"name": "deployctl", "args": [], "cwd": "/", "env": {}, "stdin": "A" * size}
    body = json.dumps(request).encode() + b"\n"
    head = b""
else:
    request = {"model": "m", "max_tokens": 1, "messages": [{"role": "user", "content": "x" * size}]}
    body = json.dumps(request).encode()
    head = b"POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % len(body)
def send():
    try:
        if kind == "recorder":
            conn = socket.socket(socket.AF_UNIX); conn.connect(address)
        else:
            host, port = address.split(":"); conn = socket.create_connection((host, int(port)))
        conn.sendall(head); conn.sendall(body); conn.shutdown(socket.SHUT_WR); conn.recv(100)
    except OSError:
        pass
threads = [threading.Thread(target=send) for _ in range(count)]
[t.start() for t in threads]; [t.join() for t in threads]
"""


@contextlib.contextmanager
def peak_rss() -> Iterator[list[float]]:
    """The growth of this process's resident memory (MB) while the block ran, sampled every 5 ms."""
    page, done, peak = os.sysconf("SC_PAGE_SIZE"), threading.Event(), [0.0]

    def rss() -> float:
        return int(Path("/proc/self/statm").read_text().split()[1]) * page / MB

    base = rss()

    def sample() -> None:
        while not done.wait(0.005):
            peak[0] = max(peak[0], rss() - base)

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    try:
        yield peak
    finally:
        done.set()
        thread.join()


@contextlib.contextmanager
def patched(module: Any, **values: Any) -> Iterator[None]:
    old = {name: getattr(module, name) for name in values}
    for name, value in values.items():
        setattr(module, name, value)
    try:
        yield
    finally:
        for name, value in old.items():
            setattr(module, name, value)


def clients(kind: str, address: str, count: int, size: int) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", CLIENT, kind, address, str(count), str(size)])


def recorder_flood(folder: Path, count: int, size: int, *, unbounded: bool = False) -> float:
    lifted = {"MAX_CALLS": 10_000, "MAX_CONNECTIONS": 10_000, "REQUEST_CAP_BYTES": 16 * MB}

    async def scenario() -> float:
        host = RecordingHost(FakeSandbox(), [CliRecorder(name="deployctl", exit_code=0)])
        path = folder / f"recorder-{os.getpid()}.sock"
        await host.start(path)
        with peak_rss() as peak:
            proc = clients("recorder", str(path), count, size)
            while proc.poll() is None:
                await asyncio.sleep(0.01)
        await host.stop()
        return peak[0]

    with patched(recording, **(lifted if unbounded else {})):
        return asyncio.run(scenario())


def model_flood(count: int, size: int, *, unbounded: bool = False) -> float:
    cap = 64 * MB if unbounded else handler.MAX_BODY_BYTES
    slots = 10_000 if unbounded else handler.BODY_SLOTS
    script = {"turns": [{"blocks": [{"text": "done"}]}]}
    with (
        patched(server_module, BODY_SLOTS=slots),
        patched(handler, MAX_BODY_BYTES=cap),
        ScriptedServer(script) as server,
    ):
        if unbounded:
            server.log.body_budget = 10**12
        with peak_rss() as peak:
            clients("model", server.base_url.removeprefix("http://"), count, size).wait()
    return peak[0]


def timed(step: Callable[[], Any]) -> tuple[float, Any]:
    started = time.perf_counter()
    try:
        outcome: Any = step()
    except WorkspaceTooLarge as exc:
        outcome = exc
    return time.perf_counter() - started, outcome


def snapshot(root: Path, bounded: bool) -> tuple[float, int]:
    """Seconds until the snapshot of ``root`` is written or refused, and the bytes spooled."""
    with tempfile.SpooledTemporaryFile(max_size=16 * MB) as spool:
        seconds, _ = timed(lambda: write_tar(root, spool, bounds=Bounds.of(Limits()) if bounded else None))
        return seconds, spool.seek(0, io.SEEK_END)


def output_flood(folder: Path, megabytes: int) -> tuple[float, float, float, float]:
    """(seconds, MB on disk) to capture ``megabytes`` of stdout: unbounded (a file), bounded (pipes)."""
    argv = ["head", "-c", str(megabytes * MB), "/dev/zero"]
    started = time.perf_counter()
    with tempfile.TemporaryFile(dir=folder) as spool:
        subprocess.run(argv, stdout=spool, check=True)
        spooled = spool.seek(0, io.SEEK_END) / MB
        spool.seek(0)
        spool.read(8 * MB)
    before = time.perf_counter() - started
    started = time.perf_counter()
    asyncio.run(run_in_group(argv, cwd=folder, env={"PATH": "/usr/bin:/bin"}))
    return before, spooled, time.perf_counter() - started, 0.0


def row(name: str, unbounded: float, bounded: float, unit: str) -> None:
    ratio = unbounded / bounded if bounded else float("inf")
    print(f"{name:<52} {unbounded:>10.1f} {bounded:>10.2f} {unit:<4} {ratio:>8.1f}x")


MEMORY = {
    "recorder-unbounded": lambda folder: recorder_flood(folder, 40, 15 * MB, unbounded=True),
    "recorder": lambda folder: recorder_flood(folder, 40, 15 * MB),
    "recorder-at-cap": lambda folder: recorder_flood(folder, 40, 4 * MB - 64 * 1024),
    "model-unbounded": lambda folder: model_flood(20, 15 * MB, unbounded=True),
    "model": lambda folder: model_flood(20, 15 * MB),
    "model-at-cap": lambda folder: model_flood(20, 8 * MB - 64 * 1024),
}
"""Each memory measurement, run alone in a fresh process (``--measure NAME`` prints its MB)."""


def measured(name: str, folder: Path) -> float:
    done = subprocess.run(
        [sys.executable, __file__, "--measure", name, "--folder", str(folder)],
        capture_output=True,
        text=True,
        check=True,
    )
    return float(done.stdout.split()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--files", type=int, default=100_000, help="files in the inode flood")
    parser.add_argument("--flood-mb", type=int, default=2048, help="MB printed on stdout")
    parser.add_argument("--measure", choices=sorted(MEMORY), help=argparse.SUPPRESS)
    parser.add_argument("--folder", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(f"{MEMORY[args.measure](args.folder):.2f}")
        return
    with tempfile.TemporaryDirectory(prefix="coder_eval-costs-") as name:
        folder = Path(name)
        print(f"{'attack':<52} {'unbounded':>10} {'bounded':>10} {'':<4} {'ratio':>9}")
        before = measured("recorder-unbounded", folder)
        row("recorder: 40 connections x 15 MiB, RSS growth", before, measured("recorder", folder), "MB")
        row("recorder: 40 x just under its 4 MiB cap", before, measured("recorder-at-cap", folder), "MB")
        before = measured("model-unbounded", folder)
        row("model server: 20 requests x 15 MiB, RSS growth", before, measured("model", folder), "MB")
        row("model server: 20 x just under its 8 MiB cap", before, measured("model-at-cap", folder), "MB")
        flood = folder / "flood"
        flood.mkdir()
        for i in range(args.files):
            (flood / str(i)).touch()
        seconds = snapshot(flood, False)[0], snapshot(flood, True)[0]
        row(f"{args.files} files: seconds to snapshot / refuse", *seconds, "s")
        sparse = folder / "sparse"
        sparse.mkdir()
        for i in range(3):
            with (sparse / str(i)).open("wb") as handle:
                handle.truncate(900 * 1000 * 1000)
        (before_s, spooled), (after_s, kept) = snapshot(sparse, False), snapshot(sparse, True)
        row("3 sparse files of 900 MB: seconds to snapshot / refuse", before_s, after_s, "s")
        row("3 sparse files of 900 MB: MB spooled", spooled / MB, kept / MB, "MB")
        before_s, spooled_mb, after_s, after_mb = output_flood(folder, args.flood_mb)
        row(f"{args.flood_mb} MB on stdout: seconds to capture", before_s, after_s, "s")
        row(f"{args.flood_mb} MB on stdout: MB written to disk", spooled_mb, after_mb, "MB")


if __name__ == "__main__":
    main()
