"""The task's tests as they are before the agent runs: what each pytest-based criterion expects.

Example::

    prepared = await with_expected_tests(task, stage.sandbox, prepared, pytest_config)
    prepared[0]   # ExpectedTests(ids=frozenset({"hidden_tests/test_calc.py::test_add", ...}), ...)

For each criterion with a ``tests_command`` (``hidden_tests``, ``pytest``, a ``run_command`` that runs
pytest), the command runs with ``--collect-only`` in a verifier seeded from the workspace as set-up
left it, with the hidden tests in place and the task's own pytest configuration: nothing the agent
did exists yet. What pytest collected there becomes the criterion's ``prepared`` state, and grading
compares the run's test ids with it (``criteria/expected_tests.py``). The set-up phase and
``coder-eval regrade`` (which rebuilds the pristine workspace) both do this.

The collection costs a sandbox and a pytest start. Its result depends only on what the verifier is
made from, so it is kept in memory for the process, keyed by a digest of those inputs (the pristine
workspace's files, the hidden tests' files, the task's sandbox settings and folder, the pytest
configuration, the commands): the repeats and variants of a task collect once.
"""

from __future__ import annotations

import hashlib
import os
import tarfile
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

from coder_eval.criteria.expected_tests import ExpectedTests, conftest_hashes, expected_tests
from coder_eval.episode.snapshots import take_snapshot
from coder_eval.episode.verifier import Verifier, open_verifier
from coder_eval.sandbox.base import Sandbox
from coder_eval.task import TaskSpec

COLLECT_ONLY = "--collect-only -q"
KEPT = 256
"""Collections kept in memory (the oldest is forgotten first)."""

_collected: OrderedDict[str, dict[str, ExpectedTests | None]] = OrderedDict()


async def with_expected_tests(
    task: TaskSpec, sandbox: Sandbox, prepared: Sequence[Any], pytest_config: tuple[str, bytes] | None
) -> list[Any]:
    """``prepared`` with each pytest-based criterion's expected tests, collected from ``sandbox``'s
    workspace as it is now (before the agent); other criteria keep their state."""
    commands = {i: c.tests_command() for i, c in enumerate(task.success_criteria)}
    wanted = {i: command for i, command in commands.items() if command is not None}
    if not wanted:
        return list(prepared)
    with await take_snapshot(sandbox) as snapshot:
        key = inputs_digest(task, snapshot, pytest_config, sorted(set(wanted.values())))
        if key not in _collected:
            _collected[key] = await _collect_all(task, snapshot, pytest_config, wanted)
            while len(_collected) > KEPT:
                _collected.popitem(last=False)
        found = _collected[key]
    return [found.get(wanted.get(i, "")) or state for i, state in enumerate(prepared)]


async def _collect_all(
    task: TaskSpec, snapshot: IO[bytes], pytest_config: tuple[str, bytes] | None, wanted: dict[int, str]
) -> dict[str, ExpectedTests | None]:
    verifier = await open_verifier(task, snapshot, pytest_config=pytest_config)
    try:
        conftests = await conftest_hashes(verifier.sandbox)
        return {
            command: await _collect(verifier, command, task, i, conftests) for i, command in wanted.items()
        }
    finally:
        await verifier.close()


async def _collect(
    verifier: Verifier, command: str, task: TaskSpec, index: int, conftests: dict[str, str]
) -> ExpectedTests | None:
    """What ``command`` collects in the pristine verifier (None when no pytest session finished)."""
    await verifier.clear_reports()
    options = f"{verifier.sandbox.env.get('PYTEST_ADDOPTS', '')} {COLLECT_ONLY}".strip()
    timeout = getattr(task.success_criteria[index], "timeout", None)
    await verifier.sandbox.exec(command, timeout=timeout, env={"PYTEST_ADDOPTS": options})
    reports = await verifier.pytest_reports()
    return expected_tests(reports, conftests) if reports else None


def inputs_digest(
    task: TaskSpec, snapshot: IO[bytes], pytest_config: tuple[str, bytes] | None, commands: Sequence[str]
) -> str:
    """A digest of everything the pristine collection depends on (the snapshot is read and rewound)."""
    digest = hashlib.sha256()
    for part in (task.sandbox.model_dump_json(), str(task.source_dir), repr(pytest_config), *commands):
        digest.update(part.encode() + b"\0")
    _digest_tar(digest, snapshot)
    if task.hidden_tests is not None:
        _digest_folder(digest, Path(task.hidden_tests.path), task.hidden_tests.mount_point)
    return digest.hexdigest()


def _digest_tar(digest: Any, snapshot: IO[bytes]) -> None:
    """Names, kinds, modes, link targets and contents of the snapshot's members (not their times)."""
    snapshot.seek(0)
    with tarfile.open(fileobj=snapshot, mode="r:") as tar:
        for member in tar:
            digest.update(f"{member.name}\0{member.type!r}\0{member.mode}\0{member.linkname}\0".encode())
            handle = tar.extractfile(member) if member.isfile() else None
            if handle is not None:
                for chunk in iter(lambda: handle.read(1 << 20), b""):  # noqa: B023 (read at once)
                    digest.update(chunk)
    snapshot.seek(0)


def _digest_folder(digest: Any, folder: Path, mount_point: str) -> None:
    digest.update(mount_point.encode() + b"\0")
    for parent, dirnames, filenames in os.walk(folder):
        dirnames.sort()
        for name in sorted(filenames):
            path = Path(parent) / name
            digest.update(str(path.relative_to(folder)).encode() + b"\0")
            if path.is_file():
                digest.update(path.read_bytes())
