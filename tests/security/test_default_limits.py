"""A task that sets no limits still cannot take the host down: small probes of the default limits.

A thread bomb stands in for a fork bomb (threads and processes count alike against the process
limit), a file past the size limit for a disk bomb; the memory limit is read where the sandbox's
processes are confined (a 4 GB bomb is too big for a probe on a shared machine).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from coder_eval.sandbox import DRIVERS, Provision
from coder_eval.sandbox.spec import DEFAULT_FILE_MB, DEFAULT_MEMORY_MB, DEFAULT_PIDS

from .conftest import EVERY

pytestmark = pytest.mark.parametrize("driver", EVERY)

THREADS = """
import threading, time
started = 0
try:
    for _ in range({count}):
        threading.Thread(target=time.sleep, args=(3,), daemon=True).start()
        started += 1
except RuntimeError:
    pass
print(started)
"""


def with_default_limits(driver: str, probe: Any, tmp_path: Path) -> Any:
    """Run ``probe(sandbox)`` in a sandbox of ``driver`` made from a spec that sets no limits."""

    async def scenario() -> Any:
        spec_class, sandbox_class = DRIVERS[driver]
        assert sandbox_class is not None
        spec = spec_class()
        sandbox = await sandbox_class.create(spec, Provision(limits=spec.limits), base_dir=tmp_path)
        try:
            return await probe(sandbox)
        finally:
            await sandbox.close()

    return asyncio.run(scenario())


def test_a_thread_bomb_stops_at_the_process_limit(driver: str, tmp_path: Path) -> None:
    async def probe(sandbox: Any) -> int:
        result = await sandbox.exec(["python3", "-c", THREADS.format(count=DEFAULT_PIDS + 100)], timeout=60)
        return int(result.stdout.strip())

    started = with_default_limits(driver, probe, tmp_path)

    assert 0 < started < DEFAULT_PIDS


def test_a_file_cannot_grow_past_the_file_size_limit(driver: str, tmp_path: Path) -> None:
    async def probe(sandbox: Any) -> tuple[str, str]:
        limit = await sandbox.exec("ulimit -f")
        grown = await sandbox.exec(f"truncate -s {DEFAULT_FILE_MB + 1}M big; stat -c %s big")
        return limit.stdout.strip(), grown.stdout.strip()

    limit, grown = with_default_limits(driver, probe, tmp_path)

    assert limit == str(DEFAULT_FILE_MB * 1024)  # bash counts 1024-byte blocks
    assert int(grown) <= DEFAULT_FILE_MB * 1024 * 1024  # the kernel refused to extend it


def test_the_sandbox_is_confined_to_the_memory_limit(driver: str, tmp_path: Path) -> None:
    async def probe(sandbox: Any) -> int:
        if driver == "docker":
            found = subprocess.run(
                ["docker", "inspect", "--format", "{{json .HostConfig}}", sandbox.name],
                capture_output=True,
                text=True,
                check=True,
            )
            return int(json.loads(found.stdout)["Memory"])
        assert sandbox.cgroup is not None, "as root a control group is always made"
        folder = next(
            f for f in sandbox.cgroup.folders if "memory" in f.parts or f.name.startswith("coder_eval")
        )
        name = "memory.max" if sandbox.cgroup.unified else "memory.limit_in_bytes"
        return int((folder / name).read_text())

    assert with_default_limits(driver, probe, tmp_path) == DEFAULT_MEMORY_MB * 1024 * 1024
