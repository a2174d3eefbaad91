"""The snapshot view answers the read verbs exactly as a sandbox restored from the same snapshot, and
is used only where it can: graders that run nothing, snapshots of plain files and folders."""

from __future__ import annotations

import asyncio
import io
import re
import tarfile
from collections.abc import Awaitable
from pathlib import Path
from typing import Any

import pytest

from coder_eval.episode.verifier import open_verifier, reads_only
from coder_eval.errors import SandboxError
from coder_eval.sandbox import Provision, TempdirSandbox, TempdirSpec
from coder_eval.sandbox.snapshot import write_tar
from coder_eval.sandbox.snapshot_view import SnapshotView
from coder_eval.task import load_tasks
from tests.helpers import write_task

FILES = {
    "a.txt": b"alpha\n",
    "b.txt": b"beta\n",
    ".hidden": b"dot\n",
    "my file.txt": b"spaces\n",
    "src/app.py": b"print('app')\n",
    "src/util/io.py": b"print('io')\n",
    "src/util/.env": b"SECRET=1\n",
    "deep/x/y/z.json": b'{"ok": true}\n',
    "docs/README.md": b"# docs\n",
}
PATTERNS = [
    "*", "*.txt", "**", "**/*.py", "**/*", "src/**", "src/*.py", "src/**/*.py", "?.txt", "[ab].txt",
    "[!a].txt", "./a.txt", "src//app.py", "nothing/*", "empty", "empty/**", ".hidden", "*/*",
    "deep/**/z.json", "**/z.json", "src/", "src", "**/.env", "docs/*.MD", "my file.txt",
]  # fmt: skip
PATHS = [
    "a.txt", "./a.txt", "src/../a.txt", "src", "empty", "missing.txt", "../outside", "src/util/io.py",
    "my file.txt", ".hidden", "deep/x/../x/y/z.json", "src/app.py/", "..",
]  # fmt: skip


def workspace_tar(tmp_path: Path, files: dict[str, bytes] = FILES) -> io.BytesIO:
    root = tmp_path / "workspace"
    (root / "empty").mkdir(parents=True)
    for name, data in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
    buffer = io.BytesIO()
    write_tar(root, buffer)
    return buffer


async def outcome(call: Awaitable[Any]) -> Any:
    """What a verb returns, or the kind and message of the error it raises (a host path a restored
    sandbox names in it left out: the view has none)."""
    try:
        return await call
    except SandboxError as exc:
        return type(exc).__name__, re.sub(r" \(/[^)]*\)$", "", str(exc))


def test_the_view_reads_and_lists_as_a_restored_sandbox_does(tmp_path: Path) -> None:
    snapshot = workspace_tar(tmp_path)

    async def both() -> tuple[list[Any], list[Any]]:
        restored = await TempdirSandbox.create(TempdirSpec(), Provision(role="verifier", snapshot=snapshot))
        view = SnapshotView.load(snapshot)
        assert view is not None
        try:
            answers = []
            for sandbox in (restored, view):
                reads = [await outcome(sandbox.read_file(p)) for p in PATHS]
                reads += [await outcome(sandbox.read_file("a.txt", limit=3))]
                lists = [await outcome(sandbox.glob(p)) for p in PATTERNS]
                answers.append(reads + lists)
            return answers[0], answers[1]
        finally:
            await restored.close()

    restored, view = asyncio.run(both())
    assert view == restored
    assert b"alpha\n" in view and ["a.txt", "b.txt", "my file.txt"] in view  # the checks saw files


@pytest.mark.parametrize(
    ("name", "kind", "why"),
    [
        ("link", tarfile.SYMTYPE, "a symbolic link"),
        ("hard", tarfile.LNKTYPE, "a hard link"),
        ("fifo", tarfile.FIFOTYPE, "a pipe"),
        ("/etc/passwd", tarfile.REGTYPE, "an absolute name"),
        ("../escape.txt", tarfile.REGTYPE, "a name leading out"),
        ("a/./b.txt", tarfile.REGTYPE, "a name a restore would rewrite"),
    ],
)
def test_a_snapshot_only_a_restore_answers_exactly_gets_no_view(name: str, kind: bytes, why: str) -> None:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        tar.addfile(tarfile.TarInfo("plain.txt"), io.BytesIO(b""))
        odd = tarfile.TarInfo(name)
        odd.type, odd.linkname = kind, "plain.txt" if kind in (tarfile.SYMTYPE, tarfile.LNKTYPE) else ""
        tar.addfile(odd, io.BytesIO(b"") if kind == tarfile.REGTYPE else None)
    assert SnapshotView.load(buffer) is None, why


def test_a_name_both_file_and_folder_or_a_large_snapshot_gets_no_view(tmp_path: Path) -> None:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        tar.addfile(tarfile.TarInfo("x"), io.BytesIO(b""))
        tar.addfile(tarfile.TarInfo("x/y"), io.BytesIO(b""))
    assert SnapshotView.load(buffer) is None
    big = workspace_tar(tmp_path, {"big.bin": b"0" * 4096})
    assert SnapshotView.load(big, max_bytes=4095) is None
    assert SnapshotView.load(big, max_bytes=4096) is not None


def test_a_view_runs_and_writes_nothing(tmp_path: Path) -> None:
    view = SnapshotView.load(workspace_tar(tmp_path))
    assert view is not None
    with pytest.raises(SandboxError, match="runs no commands"):
        asyncio.run(view.exec("touch pwned"))
    with pytest.raises(SandboxError, match="read-only"):
        asyncio.run(view.write_file("a.txt", "changed"))
    assert asyncio.run(view.read_file("a.txt")) == b"alpha\n"


def test_a_view_snapshots_its_files_again(tmp_path: Path) -> None:
    view = SnapshotView.load(workspace_tar(tmp_path))
    assert view is not None
    out = io.BytesIO()
    asyncio.run(view.snapshot(out, ignore=["src/"]))
    again = SnapshotView.load(out)
    assert again is not None
    assert again.files == {k: v for k, v in FILES.items() if not k.startswith("src/")}


READS = """
task_id: reads
initial_prompt: p
success_criteria:
  - {type: file_contains, path: a.txt, includes: [alpha]}
  - type: json_check
    path: deep/x/y/z.json
    assertions: [{expression: ok, operator: equals, expected: true}]
"""


@pytest.mark.parametrize(
    ("extra", "view"),
    [
        ("", True),
        ("  - {type: run_command, command: 'true'}\n", False),
        ("  - {type: pytest, path: tests}\n", False),
        ("post_run: ['echo hi']\n", False),
    ],
)
def test_the_verifier_serves_the_snapshot_only_to_graders_that_run_nothing(
    tmp_path: Path, extra: str, view: bool
) -> None:
    [task] = load_tasks([write_task(tmp_path / "task", READS + extra)])
    assert reads_only(task) is view
    verifier = asyncio.run(open_verifier(task, workspace_tar(tmp_path)))
    try:
        assert isinstance(verifier.sandbox, SnapshotView) is view
        assert asyncio.run(verifier.sandbox.read_file("a.txt")) == b"alpha\n"
    finally:
        asyncio.run(verifier.close())


def test_a_snapshot_with_a_link_is_restored_in_a_sandbox_even_for_reading(tmp_path: Path) -> None:
    [task] = load_tasks([write_task(tmp_path / "task", READS)])
    root = tmp_path / "linked"
    root.mkdir()
    (root / "a.txt").symlink_to("/etc/hostname")
    buffer = io.BytesIO()
    write_tar(root, buffer)
    verifier = asyncio.run(open_verifier(task, buffer))
    try:
        assert not isinstance(verifier.sandbox, SnapshotView)
        assert [d.name for d in verifier.dropped] == ["a.txt"]  # leads out: dropped as before
    finally:
        asyncio.run(verifier.close())
