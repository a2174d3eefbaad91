"""Runs on the dask executor for the executor tests: the CLI as a subprocess, and its processes.

Example::

    with started_run(tmp_path, "tasks", "--executor", "dask", "--run-dir", "runs/r") as process:
        wait_for(lambda: bool(processes(b"sleep\x0061.5")), timeout=60)
        os.kill(worker_running(processes(b"sleep\x0061.5")[0], process.pid), signal.SIGKILL)
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from coder_eval.trajectory import read_trajectory


@contextlib.contextmanager
def started_run(cwd: Path, *args: str) -> Iterator[subprocess.Popen[str]]:
    """``coder-eval run ARGS`` in the background (a session of its own, its output captured); what
    is still running of it when the block ends (a failed test) is killed."""
    process = subprocess.Popen(
        [sys.executable, "-m", "coder_eval", "run", *args],
        cwd=cwd,
        env={**os.environ, "COLUMNS": "200", "NO_COLOR": "1"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        yield process
    finally:
        if process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.communicate()


@dataclass
class Cluster:
    """A dask cluster started by the ``dask`` commands: its address and its two processes."""

    address: str
    scheduler: subprocess.Popen[bytes]
    worker: subprocess.Popen[bytes] | None = None


def _scheduler_address(path: Path) -> str | None:
    """The address in a scheduler file, once the scheduler has written it whole."""
    try:
        return str(json.loads(path.read_text())["address"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


@contextlib.contextmanager
def running_cluster(home: Path, nthreads: int = 2) -> Iterator[Cluster]:
    """A scheduler and one worker of ``nthreads`` slots, each in a session of its own, run in ``home``;
    both stopped when the block ends (a frozen one is thawed first)."""
    from distributed import Client  # only the executor tests need dask

    home.mkdir()
    quiet = {
        "cwd": home,
        "stdout": subprocess.DEVNULL,
        "stderr": subprocess.DEVNULL,
        "start_new_session": True,
    }
    scheduler = [sys.executable, "-m", "distributed.cli.dask_scheduler", "--port", "0"]
    started = Cluster(
        "", subprocess.Popen([*scheduler, "--dashboard-address", ":0", "--scheduler-file", "s.json"], **quiet)
    )
    try:
        wait_for(lambda: _scheduler_address(home / "s.json") is not None, timeout=60)  # written whole
        started.address = str(_scheduler_address(home / "s.json"))
        worker = [
            sys.executable,
            "-m",
            "distributed.cli.dask_worker",
            started.address,
            "--nthreads",
            str(nthreads),
        ]
        started.worker = subprocess.Popen(worker, **quiet)
        with Client(started.address, timeout=60) as client:  # type: ignore[no-untyped-call]
            client.wait_for_workers(1, timeout=120)
        yield started
    finally:
        for process in (started.worker, started.scheduler):
            if process is not None and process.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGCONT)
                    os.killpg(process.pid, signal.SIGTERM)
                process.wait(timeout=30)


def wait_for(predicate: Callable[[], bool], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.05)


def processes(pattern: bytes) -> list[int]:
    """Pids of live processes whose command line (NUL-separated) contains ``pattern``."""
    found = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            if pattern in (entry / "cmdline").read_bytes() and _state(int(entry.name)) != "Z":
                found.append(int(entry.name))
        except (OSError, ValueError):
            continue
    return found


def worker_running(pid: int, submitter: int) -> int:
    """The dask worker process above ``pid``: the ancestor whose parent is the submitting process
    (a LocalCluster's nannies live in it and start the workers)."""
    while (parent := _parent(pid)) != submitter:
        assert parent > 1, f"process {pid} does not descend from {submitter}"
        pid = parent
    return pid


def descends(pid: int, ancestor: int) -> bool:
    while pid > 1:
        pid = _parent_or_0(pid)
        if pid == ancestor:
            return True
    return False


def episodes(run: Path) -> dict[str, Any]:
    """Each trajectory file's ``episode_end`` (None: interrupted), by episode id."""
    return {p.stem: read_trajectory(p).end for p in sorted((run / "episodes").glob("*.jsonl"))}


def manifest(run: Path) -> dict[str, Any]:
    return json.loads((run / "run.json").read_text())  # type: ignore[no-any-return]


def _parent(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def _parent_or_0(pid: int) -> int:
    try:
        return _parent(pid)
    except (OSError, ValueError, IndexError):
        return 0


def _state(pid: int) -> str:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
