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
the other folders of the suite its graders name or reach (read-only, at their own paths: ``suite_mounts``),
a fresh HOME, no network, and the trusted toolchain (``sandbox/toolchain.py``): no workspace folder on
PATH, Python that never puts the workspace first on ``sys.path``, pytest without plugin autoloading,
configured from the task's files as they were before the agent ran.

When every grader of a task only reads files (no ``post_run``, no hidden tests, no criterion whose
``needs`` hold ``commands``), no sandbox is made: the verifier serves the snapshot's files from memory
(``sandbox/snapshot_view.py``), which nothing the agent left can reach either.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from coder_eval.criteria.grader_files import suite_folders
from coder_eval.sandbox import DriverSandbox, Mount, Provision, make_sandbox
from coder_eval.sandbox.envs import sandbox_envs
from coder_eval.sandbox.pytest_reports import MAX_REPORT_BYTES, PytestReport, read_reports
from coder_eval.sandbox.snapshot import Dropped
from coder_eval.sandbox.snapshot_view import MAX_BYTES, SnapshotView
from coder_eval.sandbox.toolchain import VERDICTS_VARIABLE
from coder_eval.task import TaskSpec


@dataclass
class Verifier:
    """The verifier's sandbox and the test reports written in it."""

    sandbox: DriverSandbox
    seen: set[str] = field(default_factory=set)

    @property
    def dropped(self) -> list[Dropped]:
        """Snapshot members left out when the workspace was restored (links leading out, devices)."""
        return self.sandbox.dropped

    async def pytest_reports(self) -> list[PytestReport]:
        """Every pytest session's counts since the last :meth:`clear_reports` (oldest first)."""
        names = [name for name in await self._report_names() if name not in self.seen]
        return read_reports([await self.sandbox.read_file(name, limit=MAX_REPORT_BYTES) for name in names])

    async def clear_reports(self) -> None:
        """Forget earlier sessions' reports (each criterion counts only its own)."""
        self.seen.update(await self._report_names())

    async def _report_names(self) -> list[str]:
        """The verdict plugin's files (``pytest-<pid>-<monotonic ns>.json``), oldest first; the folder
        is the sandbox's own, where ``$CODER_EVAL_VERDICTS`` points, outside the workspace."""
        folder = self.sandbox.env.get(VERDICTS_VARIABLE)
        if not folder:
            return []
        names = await self.sandbox.glob(f"{folder.rstrip('/')}/pytest-*.json")
        return sorted(names, key=_session_clock)

    async def close(self) -> None:
        await self.sandbox.close()


def _session_clock(name: str) -> int:
    """The monotonic clock in a report's name (``pytest-4242-81234567.json`` -> 81234567)."""
    stem = name.rsplit("/", 1)[-1].removesuffix(".json")
    try:
        return int(stem.rsplit("-", 1)[-1])
    except ValueError:
        return 0


def verifier_provision(
    task: TaskSpec,
    snapshot: Path | IO[bytes],
    pytest_config: tuple[str, bytes] | None,
    envs: tuple[Path | None, Path | None] = (None, None),
) -> Provision:
    """What the verifier's sandbox is made with (see the module docstring)."""
    mounts = [Mount(task.source_dir, "TASK_DIR")]
    if task.reference is not None:
        mounts.append(Mount(Path(task.reference.directory), "REFERENCE_DIR"))
    mounts += suite_mounts(task, mounts)
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
        confcutdir=hidden.mount_point if hidden is not None else ".",
    )


def suite_mounts(task: TaskSpec, shown: list[Mount]) -> list[Mount]:
    """The suite's own folders the task's graders use (``coder_eval.criteria.grader_files``), beyond those in
    ``shown``: each read-only at its own path, so ``$TASK_DIR/../graders/x.py`` is the suite's file,
    never a copy the agent could have touched."""
    covered = [m.source for m in shown]
    return [
        Mount(folder)
        for folder in suite_folders(task.grader_sources())
        if not any(folder.is_relative_to(c) for c in covered)
    ]


async def open_verifier(
    task: TaskSpec,
    snapshot: Path | IO[bytes],
    *,
    pytest_config: tuple[str, bytes] | None = None,
    base_dir: Path | None = None,
) -> Verifier:
    """A fresh verifier for ``task`` from the agent's workspace ``snapshot`` (a tar: a path, or a
    seekable file), with fresh copies of the task's package environments (``sandbox.python`` /
    ``sandbox.node``); for graders that only read files, the snapshot itself when it can serve them
    (see the module docstring)."""
    if reads_only(task):
        view = await _view(snapshot)
        if view is not None:
            return Verifier(view)
    envs = await sandbox_envs(task.sandbox.python, task.sandbox.node)
    provision = verifier_provision(task, snapshot, pytest_config, envs)
    sandbox = await make_sandbox(task.sandbox, provision, base_dir=base_dir)
    return Verifier(sandbox)


def reads_only(task: TaskSpec) -> bool:
    """Whether grading ``task`` only reads workspace files: nothing runs in the verifier."""
    return (
        not task.post_run
        and task.hidden_tests is None
        and not any("commands" in criterion.needs for criterion in task.success_criteria)
    )


INLINE_BYTES = 1024 * 1024
"""A snapshot this small is read on the event loop; a larger one in a worker thread."""


async def _view(snapshot: Path | IO[bytes]) -> SnapshotView | None:
    size = snapshot.stat().st_size if isinstance(snapshot, Path) else snapshot.seek(0, os.SEEK_END)
    if size > MAX_BYTES:
        return None
    return (
        SnapshotView.load(snapshot)
        if size <= INLINE_BYTES
        else await asyncio.to_thread(SnapshotView.load, snapshot)
    )
