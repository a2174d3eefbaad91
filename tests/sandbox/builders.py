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


MODEL_ROUTE_PROBE = (
    "import socket, sys\n"
    "s = socket.create_connection(('127.0.0.1', int(sys.argv[1])), timeout=2)\n"
    "s.sendall(b'ping'); print(s.recv(100).decode())\n"
    "try:\n"
    "    socket.create_connection(('127.0.0.1', int(sys.argv[2])), 1)\n"
    "    print('other reached')\n"
    "except OSError:\n"
    "    print('other refused')"
)


def through_model_route(sandbox: Any, model_port: int, env_names: list[str] | None = None) -> tuple[str, int]:
    """With the model proxy of a ``network: model`` sandbox serving ``model_port``, a program inside
    (started as an agent's CLI is) calls the model, then another server on the host's 127.0.0.1:
    its output and exit code (``"pong:ping\\nother refused\\n", 0`` when only the model is reached)."""
    from coder_eval.sandbox.network import ModelProxy
    from coder_eval.sandbox.process import run_in_group

    other = socket.create_server(("127.0.0.1", 0))
    proxy = ModelProxy(("127.0.0.1", model_port))

    async def scenario() -> tuple[str, int]:
        await proxy.start(sandbox.host_socket("model"))
        try:
            args = [str(model_port), str(other.getsockname()[1])]
            argv = sandbox.wrap(["python", "-c", MODEL_ROUTE_PROBE, *args], env_names=env_names or [])
            result = await run_in_group(argv, cwd=Path("/"), env=dict(sandbox.env), timeout=30)
            return result.stdout, result.exit_code
        finally:
            await proxy.stop()

    try:
        return run(scenario())
    finally:
        other.close()
