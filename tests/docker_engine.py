"""A docker engine for the tests marked ``docker``: started when none runs and we may, stopped after.

Example::

    @pytest.mark.docker
    def test_in_a_container(): ...          # skipped, with the reason, only where no engine can run

    DRIVER_NAMES = ["tempdir", pytest.param("docker", marks=pytest.mark.docker)]

The first such test starts ``dockerd`` through ``scripts/dockerd.sh`` (as root, when it is installed
and not running) and builds the default image once per machine; the session stops the daemon it
started. Under pytest-xdist the workers take turns at this (a file lock), and the daemon a worker
started is stopped by the controlling process when the whole run ends (``stop_started_engine``), never
by a worker while another still uses it. Where neither can happen, every docker test is skipped with
the reason.
"""

from __future__ import annotations

import asyncio
import fcntl
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from coder_eval.errors import SandboxError
from coder_eval.sandbox.docker.base_image import ensure_base_image
from coder_eval.sandbox.docker.engine import engine_problem, forget_probe

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "dockerd.sh"


def _script(action: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", str(SCRIPT), action], capture_output=True, text=True, check=False)


LOCK = Path("/tmp/coder_eval-tests-docker.lock")


def _started_marker(controller: int) -> Path:
    """The file saying that the test run of ``controller`` (its pid) started the daemon."""
    return Path(f"/tmp/coder_eval-tests-dockerd.{controller}")


def _controller() -> int:
    """The pid of the process that ends the test run: the xdist controller, or this one."""
    return os.getppid() if os.environ.get("PYTEST_XDIST_WORKER") else os.getpid()


@pytest.fixture(scope="session")
def docker_engine() -> Iterator[None]:
    """A running engine and the default image, or a skip that says why there is none."""
    with LOCK.open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one worker at a time starts the daemon and builds the image
        why = ""
        if asyncio.run(engine_problem()) is not None:
            done = _script("start")
            forget_probe()
            if done.returncode == 0 and "started" in done.stdout:
                _started_marker(_controller()).touch()
            why = "" if done.returncode == 0 else f" ({done.stderr.strip()})"
        problem = asyncio.run(engine_problem())
        problem = problem and problem + why
        if problem is None:
            try:
                asyncio.run(ensure_base_image())
            except SandboxError as exc:
                problem = str(exc)
    if problem is not None:
        pytest.skip(f"no docker engine here: {problem}")
    yield


def stop_started_engine() -> None:
    """At the end of the whole test run: stop the daemon one of its sessions started."""
    marker = _started_marker(os.getpid())
    if marker.exists():
        marker.unlink()
        _script("stop")
        forget_probe()


@pytest.fixture(autouse=True)
def _docker_when_marked(request: pytest.FixtureRequest) -> None:
    """Tests marked ``docker`` (directly or through a parameter) get the engine, or are skipped."""
    if request.node.get_closest_marker("docker") is not None:
        request.getfixturevalue("docker_engine")
