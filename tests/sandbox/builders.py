"""Sandboxes for the sandbox tests: made and closed around each test, driven with ``asyncio.run``.

Example::

    def test_echo(make_sandbox):
        sandbox = make_sandbox()
        assert run(sandbox.exec("echo hi")).stdout == "hi\\n"
"""

from __future__ import annotations

import asyncio
import os
import socket
import threading
import time
from collections.abc import Callable, Coroutine, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import pytest

from coder_eval.sandbox.bwrap import bwrap_problem

T = TypeVar("T")

BWRAP_PROBLEM = asyncio.run(bwrap_problem())
needs_bwrap = pytest.mark.skipif(BWRAP_PROBLEM is not None, reason=f"bwrap unavailable: {BWRAP_PROBLEM}")
DOCKER = pytest.param("docker", marks=pytest.mark.docker)
"""The docker driver as a parameter (the engine is started for it, or the test is skipped)."""
HOST_DRIVERS = ["tempdir", pytest.param("bwrap", marks=needs_bwrap)]
"""The drivers whose sandbox is a host folder (``HostSandbox``)."""
DRIVER_NAMES = [*HOST_DRIVERS, DOCKER]
"""Parametrise a test over every driver (each skipped with a reason where it cannot run)."""


def host_folder(sandbox: Any) -> Path:
    """The host folder a sandbox made (a host driver's whole sandbox; docker's staging and binds)."""
    return Path(sandbox.host.base if sandbox.driver == "docker" else sandbox.layout.base)


def run(coro: Coroutine[Any, Any, T]) -> T:
    """Run one coroutine to completion (the sandbox holds no loop state between calls)."""
    return asyncio.run(coro)


def alive(pattern: str, within: float = 2.0) -> list[int]:
    """Pids of live (non-zombie) processes whose command line contains ``pattern``, once those that
    were already killed have had ``within`` seconds to die (a loaded machine schedules them late)."""
    deadline = time.monotonic() + within
    while (pids := _alive_now(pattern)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return pids


def _alive_now(pattern: str) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if pattern in cmdline and state != "Z":
            pids.append(int(entry.name))
    return pids


def wait_alive(pattern: str, timeout: float = 5.0) -> None:
    """Wait until a process matching ``pattern`` runs (it was started in the background)."""
    deadline = time.monotonic() + timeout
    while not _alive_now(pattern):
        assert time.monotonic() < deadline, f"{pattern!r} never started"
        time.sleep(0.05)


@contextmanager
def tcp_server(host: str, answer: Callable[[bytes], bytes | None]) -> Iterator[int]:
    """A TCP server on ``host`` (its port yielded) that reads what each connection sends and replies
    with ``answer(data)``, or nothing when that is None."""
    server = socket.create_server((host, 0))

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            with conn:
                reply = answer(conn.recv(1000))
                if reply is not None:
                    conn.sendall(reply)

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield server.getsockname()[1]
    finally:
        server.close()
