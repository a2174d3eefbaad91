"""The judge's workspace: a fresh copy of the finished sandbox, read-only under bubblewrap where it runs.

Example::

    async with judge_workspace(ctx.sandbox.root, "auto") as workspace:
        workspace.root          # <tmp>/coder_eval-judge-x1/work: a copy of the sandbox root
        workspace.env           # a scrubbed environment: HOME, TMPDIR beside the copy, PATH, locale
        workspace.wrap          # for the launcher: the bwrap prefix, or None for a plain copy
        workspace.isolation     # "bwrap" or "copy"

The directory is laid out like a tempdir sandbox (``work``, ``home``, ``tmp``, ``bin``). ``work`` is
an exact copy of the sandbox root (symlinks kept as links, sockets and pipes left out); the whole
directory is removed afterwards, so nothing the judge does reaches the real sandbox through it.
Under bubblewrap the judge and every command it starts see the host read-only (the copy included)
except the judge's own HOME and TMPDIR, and share the host's network (the judge must reach its
model). With a plain copy, the judge runs as the calling user, like the tempdir driver: a command
given an absolute path outside the copy could still write there.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import stat
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from coder_eval.errors import GraderError
from coder_eval.sandbox.bwrap import bwrap_argv, bwrap_problem
from coder_eval.sandbox.tempdir import SandboxLayout, sandbox_env

if TYPE_CHECKING:  # the claude_code agent package imports the task model, which imports the criteria
    from coder_eval.agents.claude_code.launcher import Wrap

Isolation = Literal["auto", "bwrap", "copy"]
"""``bwrap``: a read-only mount (GraderError where bubblewrap cannot run); ``copy``: a plain copy;
``auto``: ``bwrap`` where it runs, else ``copy``."""


@dataclass(frozen=True)
class Workspace:
    """The judge's copy of the sandbox: its root, environment, confinement and its name."""

    root: Path
    env: dict[str, str]
    wrap: Wrap | None
    isolation: Literal["bwrap", "copy"]


@asynccontextmanager
async def judge_workspace(source: Path, isolation: Isolation) -> AsyncIterator[Workspace]:
    """A fresh copy of ``source`` for one judge run, removed afterwards.

    Example: ``async with judge_workspace(sandbox.root, "auto") as ws: ws.isolation`` -> ``"bwrap"``
    where bubblewrap runs, else ``"copy"``; ``"bwrap"`` raises ``GraderError`` where it cannot.
    """
    bwrap = await _bwrap_for(isolation)
    layout = SandboxLayout(Path(tempfile.mkdtemp(prefix="coder_eval-judge-")).resolve())
    try:
        await asyncio.to_thread(_copy, source, layout)
        wrap = None if bwrap is None else partial(_read_only, bwrap, layout)
        env = sandbox_env(layout, {}, [], {})
        yield Workspace(layout.root, env, wrap, "copy" if bwrap is None else "bwrap")
    finally:
        await asyncio.to_thread(_remove, layout.base)


async def _bwrap_for(isolation: Isolation) -> str | None:
    if isolation == "copy":
        return None
    problem = await bwrap_problem()
    if problem is None:
        return shutil.which("bwrap")
    if isolation == "bwrap":
        raise GraderError(f"agent_judge isolation 'bwrap' is unavailable: {problem}")
    return None


def _read_only(bwrap: str, layout: SandboxLayout, argv: list[str], *, cwd: Path) -> list[str]:
    """``argv`` under bubblewrap: only the judge's HOME and TMPDIR writable, its copy read-only.

    The network is shared: the judge must reach its model.
    """
    mounts = bwrap_argv(bwrap, layout.base, cwd, network=True)
    return [*mounts, "--ro-bind", str(layout.root), str(layout.root), "--", *argv]


def _copy(source: Path, layout: SandboxLayout) -> None:
    try:
        layout.make()
        shutil.copytree(source, layout.root, symlinks=True, dirs_exist_ok=True, ignore=_special_files)
    except OSError as exc:
        raise GraderError(f"cannot copy the sandbox {source} for the judge: {exc}") from exc


def _special_files(directory: str, names: list[str]) -> set[str]:
    """Sockets, pipes and devices: not copied (reading a pipe would block)."""
    kept = (stat.S_ISREG, stat.S_ISDIR, stat.S_ISLNK)
    return {name for name in names if not any(is_kind(_mode(directory, name)) for is_kind in kept)}


def _mode(directory: str, name: str) -> int:
    try:
        return (Path(directory) / name).lstat().st_mode
    except OSError:
        return 0


def _remove(base: Path) -> None:
    """``rm -rf``, also of directories the copy made read-only."""
    for parent, dirnames, _ in os.walk(base):
        for name in dirnames:
            path = Path(parent) / name
            if not path.is_symlink():
                with contextlib.suppress(OSError):
                    path.chmod(0o700)
    shutil.rmtree(base, ignore_errors=True)
