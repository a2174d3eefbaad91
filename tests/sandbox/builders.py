"""Sandboxes for the sandbox tests: made and closed around each test, driven with ``asyncio.run``.

Example::

    def test_echo(make_sandbox):
        sandbox = make_sandbox(SandboxSpec())
        assert run(sandbox.exec("echo hi")).stdout == "hi\\n"
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, TypeVar

from coder_eval.sandbox.tempdir import TempdirSandbox
from coder_eval.task import SandboxSpec

T = TypeVar("T")


def run(coro: Coroutine[Any, Any, T]) -> T:
    """Run one coroutine to completion (the sandbox holds no loop state between calls)."""
    return asyncio.run(coro)


def create(driver: type[TempdirSandbox], spec: SandboxSpec, base_dir: Path, **kwargs: Any) -> TempdirSandbox:
    return run(driver.create(spec, base_dir=base_dir, **kwargs))


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
