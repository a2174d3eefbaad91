"""The default driver: a fresh temporary directory per episode, with its own HOME and a scrubbed env.

Example::

    sandbox = await TempdirSandbox.create(task.sandbox)
    result = await sandbox.exec("pytest -q", timeout=60)
    await sandbox.close()

Layout of the directory made for each episode (``<base>`` comes from ``tempfile.mkdtemp``)::

    <base>/work   root: the agent's working directory, seeded from the task's templates
    <base>/home   HOME and the XDG config, cache, data and state dirs
    <base>/tmp    TMPDIR
    <base>/bin    recording shims (first on PATH)

Only ``root`` is meant for the agent; HOME sits beside it so that a file listing of the working
directory shows the task's files and nothing else. This is isolation for reproducibility, **not a
security boundary**: commands run as the calling user and can read and write anything that user can.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import sys
import tempfile
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Self

from coder_eval.errors import SandboxError
from coder_eval.sandbox.base import ExecResult, inside
from coder_eval.sandbox.process import kill_group, kill_tree, run_in_group
from coder_eval.sandbox.seed import apply_template, prepare_mock_dirs
from coder_eval.sandbox.shims import install_shims

if TYPE_CHECKING:
    from coder_eval.task import SandboxSpec

SAFE_PATH = ("/usr/local/bin", "/usr/bin", "/bin")
"""System directories on every sandbox's PATH, after the shims, mock dirs and the interpreter's bin."""

PASSED_THROUGH = ("LANG", "LC_ALL", "LC_CTYPE", "TZ", "TERM")
"""The only host variables a sandbox inherits (when set); nothing else leaks in."""


@dataclass(frozen=True)
class SandboxLayout:
    """Where things live in one sandbox directory.

    Example: ``SandboxLayout(Path("/tmp/coder_eval-x1")).root`` -> ``Path("/tmp/coder_eval-x1/work")``
    """

    base: Path

    @property
    def root(self) -> Path:
        return self.base / "work"

    @property
    def home(self) -> Path:
        return self.base / "home"

    @property
    def tmp(self) -> Path:
        return self.base / "tmp"

    @property
    def bin(self) -> Path:
        return self.base / "bin"

    def make(self) -> None:
        for directory in (self.root, self.home, self.tmp, self.bin):
            directory.mkdir()


def interpreter_bin() -> Path:
    """The directory of the running interpreter, so ``python`` and ``pytest`` are the project's own.

    Example: under ``/work/.venv/bin/python`` -> ``Path("/work/.venv/bin")`` (symlinks not followed).
    """
    return Path(sys.executable).absolute().parent


def sandbox_env(
    layout: SandboxLayout, spec_env: Mapping[str, str], mock_dirs: Sequence[Path], extra: Mapping[str, str]
) -> dict[str, str]:
    """The allowlisted environment: fixed PATH/HOME/XDG/TMPDIR, a few host locale variables,
    then ``spec_env``, then ``extra`` (later wins).

    Example: ``sandbox_env(layout, {"CI": "1"}, [], {})["HOME"]`` -> ``str(layout.home)``.
    """
    path = [str(p) for p in (layout.bin, *mock_dirs, interpreter_bin())] + list(SAFE_PATH)
    home = layout.home
    env = {name: os.environ[name] for name in PASSED_THROUGH if name in os.environ}
    env.setdefault("LANG", "C.UTF-8")
    env.update(
        PATH=":".join(dict.fromkeys(path)),
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_CACHE_HOME=str(home / ".cache"),
        XDG_DATA_HOME=str(home / ".local" / "share"),
        XDG_STATE_HOME=str(home / ".local" / "state"),
        TMPDIR=str(layout.tmp),
        SHELL="/bin/bash",
    )
    return {**env, **spec_env, **extra}


MARKER_VARIABLE = "CODER_EVAL_SANDBOX"
"""Set in every sandbox command's environment to a per-sandbox value, so leftovers can be found."""


class TempdirSandbox:
    """A sandbox in a fresh temporary directory (see the module docstring for its layout)."""

    def __init__(self, layout: SandboxLayout, spec: SandboxSpec) -> None:
        self.layout = layout
        self.spec = spec
        self.root: Path = layout.root
        self.home: Path = layout.home
        self.env: dict[str, str] = {}
        self.marker = f"{MARKER_VARIABLE}={uuid.uuid4().hex}"
        self._groups: set[int] = set()
        self._closed = False

    @classmethod
    async def create(
        cls,
        spec: SandboxSpec,
        *,
        base_dir: Path | None = None,
        extra_env: Mapping[str, str] | None = None,
    ) -> Self:
        """Make and seed a fresh sandbox for ``spec``; ``extra_env`` wins over ``spec.env``.

        Example: ``await TempdirSandbox.create(SandboxSpec(env={"CI": "1"}), base_dir=Path("runs/tmp"))``
        """
        await cls.check_available()
        try:
            base = Path(tempfile.mkdtemp(prefix="coder_eval-", dir=base_dir)).resolve()
        except OSError as exc:
            raise SandboxError(
                f"cannot make a sandbox directory under {base_dir or tempfile.gettempdir()}: {exc}"
            ) from exc
        sandbox = cls(SandboxLayout(base), spec)
        try:
            await asyncio.to_thread(sandbox._populate, extra_env or {})
        except BaseException:
            await sandbox.close()
            raise
        return sandbox

    @classmethod
    async def check_available(cls) -> None:
        """Raise ``SandboxError`` when this driver cannot run here (a tempdir always can)."""

    def _populate(self, extra_env: Mapping[str, str]) -> None:
        spec = self.spec
        try:
            self.layout.make()
            for source in spec.template_sources:
                apply_template(source, self.root)
            mock_dirs = prepare_mock_dirs(spec.mock_path_dirs, self.root)
            install_shims(spec.shims, root=self.root, bin_dir=self.layout.bin)
        except OSError as exc:
            raise SandboxError(f"cannot seed the sandbox at {self.root}: {exc}") from exc
        name, _, value = self.marker.partition("=")
        self.env = {**sandbox_env(self.layout, spec.env, mock_dirs, extra_env), name: value}

    async def exec(
        self,
        cmd: str | Sequence[str],
        *,
        timeout: float | None = None,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        stdin: str | None = None,
    ) -> ExecResult:
        """Run ``cmd`` (a string through ``/bin/bash -c``, or an argv) in ``cwd`` under ``root``.

        Example: ``await sandbox.exec("make test", timeout=60, cwd="app")`` -> ``ExecResult(...)``.
        On timeout the whole process group gets SIGTERM, then SIGKILL 0.5 s later, and the result
        has ``timed_out=True`` and ``exit_code=124``. A program that is not found gives 127.
        """
        if self._closed:
            raise SandboxError(f"the sandbox at {self.root} is closed; cannot run {cmd!r}")
        workdir = inside(self.root, cwd) if cwd else self.root
        if not workdir.is_dir():
            raise SandboxError(f"cwd {cwd!r} is not a directory in the sandbox ({workdir})")
        argv = ["/bin/bash", "-c", cmd] if isinstance(cmd, str) else list(cmd)
        return await run_in_group(
            self.wrap(argv, cwd=workdir),
            cwd=workdir,
            env={**self.env, **(env or {})},
            timeout=timeout,
            stdin=stdin,
            on_start=self._groups.add,
        )

    def wrap(self, argv: Sequence[str], *, cwd: Path) -> list[str]:
        """The argv that runs ``argv`` inside this sandbox (unchanged here; bwrap prefixes itself).

        Agents that start their own processes use it to run them the way ``exec`` would.
        """
        return list(argv)

    async def stop_processes(self) -> None:
        """Kill every process the sandbox's commands left behind: their process groups, and any
        process carrying the sandbox's marker in its environment (one that detached with ``setsid``
        or a double fork too). The runner calls it when the agent is done, before grading, so nothing
        the agent started can touch the sandbox while the graders read it."""
        groups, self._groups = set(self._groups), set()
        for group in groups:
            kill_group(group, signal.SIGKILL)
        await asyncio.to_thread(kill_tree, groups, self.marker)

    async def close(self) -> None:
        """Kill what commands left running, then remove the directory (idempotent; retry on error)."""
        self._closed = True
        await self.stop_processes()
        await asyncio.to_thread(_remove_tree, self.layout.base)


def _remove_tree(base: Path, attempts: int = 3) -> None:
    """``rm -rf`` that also removes directories the agent made read-only.

    It retries briefly: a process killed a moment ago may still be writing into the tree.
    """
    for attempt in range(1, attempts + 1):
        if not base.exists():
            return
        try:
            for parent, dirnames, _ in os.walk(base):
                for name in dirnames:
                    if not (Path(parent) / name).is_symlink():
                        (Path(parent) / name).chmod(0o700)
            shutil.rmtree(base)
        except OSError as exc:
            if attempt == attempts:
                raise SandboxError(f"cannot remove the sandbox at {base}: {exc}") from exc
            time.sleep(0.1)
