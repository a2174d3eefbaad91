"""The verifier: a fresh sandbox, seeded from the agent's final workspace, where graders run.

Example::

    verifier = await open_verifier(task, Path("snapshot.tar"), pytest_config=("pytest.ini", b"..."))
    try:
        await verifier.sandbox.exec("python -m pytest -q hidden_tests")
        await verifier.pytest_reports()       # what pytest itself counted, written outside the workspace
    finally:
        await verifier.close()

By the time the verifier exists, every process the agent started is dead (the ``stop`` phase), and
the agent's sandbox is never used again: graders see the workspace files the agent left and nothing
else it left behind. The verifier adds what the agent never saw: the hidden tests (copied to their
mount point, replacing whatever the agent put there), ``$TASK_DIR`` and ``$REFERENCE_DIR`` (read-only),
a fresh HOME, no network, and the trusted toolchain (``sandbox/toolchain.py``): no workspace folder on
PATH, Python that never puts the workspace first on ``sys.path``, pytest without plugin autoloading,
configured from the task's files as they were before the agent ran.
"""

from __future__ import annotations

import asyncio
import shutil
from dataclasses import dataclass
from pathlib import Path

from coder_eval.sandbox import HostSandbox, Mount, Provision, make_sandbox
from coder_eval.sandbox.envs import sandbox_envs
from coder_eval.sandbox.snapshot import Dropped
from coder_eval.sandbox.toolchain import PytestReport, read_reports
from coder_eval.task import TaskSpec


@dataclass
class Verifier:
    """The verifier's sandbox and the test reports written in it."""

    sandbox: HostSandbox

    @property
    def dropped(self) -> list[Dropped]:
        """Snapshot members left out when the workspace was restored (links leading out, devices)."""
        return self.sandbox.dropped

    async def pytest_reports(self) -> list[PytestReport]:
        """Every pytest session's counts so far (oldest first)."""
        return await asyncio.to_thread(self._read_reports)

    def _read_reports(self) -> list[PytestReport]:
        folder = self.sandbox.layout.verdicts
        files = sorted((p for p in folder.glob("pytest-*.json")), key=lambda p: p.stat().st_mtime_ns)
        return read_reports(p.read_bytes() for p in files)

    async def clear_reports(self) -> None:
        """Forget earlier sessions' reports (each criterion counts only its own)."""
        await asyncio.to_thread(_empty, self.sandbox.layout.verdicts)

    async def close(self) -> None:
        await self.sandbox.close()


def _empty(folder: Path) -> None:
    if not folder.is_dir():  # made at the verifier's first command
        return
    for path in folder.iterdir():
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)


def verifier_provision(
    task: TaskSpec,
    snapshot: Path,
    pytest_config: tuple[str, bytes] | None,
    envs: tuple[Path | None, Path | None] = (None, None),
) -> Provision:
    """What the verifier's sandbox is made with (see the module docstring)."""
    mounts = [Mount(task.source_dir, "TASK_DIR")]
    if task.reference is not None:
        mounts.append(Mount(Path(task.reference.directory), "REFERENCE_DIR"))
    hidden = task.hidden_tests
    return Provision(
        role="verifier",
        snapshot=snapshot,
        env=dict(task.sandbox.env),
        network="none",
        mounts=tuple(mounts),
        trusted=True,
        limits=task.sandbox.limits,
        python_env=envs[0],
        node_modules=envs[1],
        hidden=(Path(hidden.path), hidden.mount_point) if hidden is not None else None,
        pytest_config=pytest_config,
        confcutdir=hidden.mount_point if hidden is not None else None,
    )


async def open_verifier(
    task: TaskSpec,
    snapshot: Path,
    *,
    pytest_config: tuple[str, bytes] | None = None,
    base_dir: Path | None = None,
) -> Verifier:
    """A fresh verifier for ``task`` from the agent's workspace ``snapshot`` (a tar file), with fresh
    copies of the task's package environments (``sandbox.python`` / ``sandbox.node``)."""
    envs = await sandbox_envs(task.sandbox.python, task.sandbox.node)
    provision = verifier_provision(task, snapshot, pytest_config, envs)
    sandbox = await make_sandbox(task.sandbox, provision, base_dir=base_dir)
    return Verifier(sandbox)
