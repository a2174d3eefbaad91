"""The sandbox seam: a few narrow verbs that every driver implements, never a host path.

Example::

    result = await sandbox.exec("pytest -q", timeout=60)
    text = (await sandbox.read_file("report.json")).decode()
    await sandbox.write_file("notes.md", "hello\\n")
    await sandbox.glob("src/**/*.py")            # ["src/app.py", "src/util/io.py"]
    with open("work.tar", "wb") as out:
        await sandbox.snapshot(out, ignore=["node_modules/"])
    await sandbox.close()

Paths given to the verbs are relative to the workspace (the agent's working directory) unless they
are absolute paths *inside the sandbox* (``ExecResult`` and the sandbox's ``env`` speak that view).
Criteria use only these verbs, so they grade the same way on every driver.
"""

from __future__ import annotations

import errno
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO, Annotated, Protocol

from pydantic import AfterValidator

from coder_eval.errors import WorkspaceFileError as WorkspaceFileError  # plugins import it from here
from coder_eval.sandbox.snapshot import Dropped


@dataclass(frozen=True)
class ExecResult:
    """What a command did."""

    exit_code: int
    stdout: str
    stderr: str
    duration_s: float
    timed_out: bool = False

    @property
    def output(self) -> str:
        """stdout then stderr, as a person would read them in a terminal."""
        return self.stdout + (("\n" if self.stdout and self.stderr else "") + self.stderr)


class Sandbox(Protocol):
    """One sandbox: a workspace, an environment, and the verbs to use them.

    ``workdir`` is the workspace as commands inside see it; ``env`` is the base environment of every
    command (PATH, HOME, TMPDIR ... as seen inside).
    """

    @property
    def driver(self) -> str:
        """The driver's name (``tempdir``, ``bwrap`` ...)."""
        ...

    @property
    def workdir(self) -> str:
        """The workspace, as commands inside see it."""
        ...

    @property
    def env(self) -> Mapping[str, str]:
        """The base environment of every command."""
        ...

    async def exec(
        self,
        cmd: str | Sequence[str],
        *,
        timeout: float | None = None,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        stdin: str | None = None,
    ) -> ExecResult:
        """Run ``cmd`` (a ``bash -c`` string or an argv) inside; everything it started dies with it
        on timeout (exit code 124)."""
        ...

    async def read_file(self, path: str, *, limit: int | None = None) -> bytes:
        """A file's bytes (at most ``limit``); ``WorkspaceFileError`` when it is not a readable file
        inside the sandbox (a link leading out of it included)."""
        ...

    async def write_file(self, path: str, data: bytes | str, *, executable: bool = False) -> None:
        """Write a file (parents made), replacing what was there."""
        ...

    async def glob(self, pattern: str, *, include_links: bool = False) -> list[str]:
        """Workspace-relative POSIX paths of the regular files matching ``pattern``, sorted.

        ``dir/**`` means every file below ``dir``. Symbolic links are listed only with
        ``include_links`` (and never followed out of the workspace). An absolute pattern inside the
        sandbox (``/…/verdicts/*.json``) lists absolute paths.
        """
        ...

    async def snapshot(self, out: IO[bytes], *, ignore: Sequence[str] = ()) -> None:
        """Write the workspace to ``out`` as an uncompressed tar stream, leaving out what ``ignore``
        matches (gitignore-style patterns, ``!pattern`` un-ignores)."""
        ...

    def wrap(
        self, argv: Sequence[str], *, cwd: str | None = None, env_names: Sequence[str] = ()
    ) -> list[str]:
        """The host argv that runs ``argv`` inside the sandbox in ``cwd``, with the variables named in
        ``env_names`` taken from the starting process's environment (for an agent's long-lived CLI)."""
        ...

    async def stop(self) -> None:
        """Kill every process started in the sandbox, for certain, before grading."""
        ...

    async def close(self) -> None:
        """Stop everything and remove the sandbox (idempotent)."""
        ...


class DriverSandbox(Sandbox, Protocol):
    """A sandbox a driver made from a ``Provision``: the verbs, and what the runner needs around them."""

    @property
    def dropped(self) -> list[Dropped]:
        """Snapshot members left out when the workspace was restored (links leading out, devices)."""
        ...

    def host_socket(self, name: str) -> Path:
        """The host path where the harness serves socket ``name`` (``recorder``, ``model``) to the
        sandbox's commands."""
        ...

    def oom_killed(self) -> bool:
        """True when the memory limit killed one of the sandbox's processes (after ``stop``)."""
        ...

    def limits_hit(self) -> list[str]:
        """The limits the sandbox's processes ran into, known after ``stop``: ``memory`` (a process
        killed at it), ``processes`` (a fork refused at it)."""
        ...


def check_sandbox_path(value: str) -> str:
    """Reject a path that would escape the sandbox: absolute, or containing ``..``.

    Example: ``check_sandbox_path("src/app.py")`` -> ``"src/app.py"``;
    ``check_sandbox_path("../etc/passwd")`` raises ``ValueError``.
    """
    path = PurePosixPath(value)
    if not value or path.is_absolute() or value.startswith("~"):
        raise ValueError(f"{value!r} must be a relative path inside the sandbox")
    if ".." in path.parts:
        raise ValueError(f"{value!r} escapes the sandbox ('..'); use a path relative to the sandbox root")
    return value


SandboxPath = Annotated[str, AfterValidator(check_sandbox_path)]
"""A path (or glob) relative to the sandbox root that cannot escape it."""

HARNESS_FOLDERS = ("/coder_eval", "/proc", "/dev", "/sys")
"""Absolute folders no task may claim: the harness's own in a container, and the kernel's."""


def check_container_path(value: str) -> str:
    """An absolute folder a task's scripts name (``/app``, ``/tests``, ``/logs/verifier``), normalised:
    never ``/``, never with ``..``, never in the harness's or the kernel's folders.

    Example: ``check_container_path("/app/")`` -> ``"/app"``; ``check_container_path("app")`` raises.
    """
    path = PurePosixPath(value)
    if not path.is_absolute() or ".." in path.parts or str(path) == "/":
        raise ValueError(f"{value!r} must be an absolute folder (not '/', no '..'), such as /app")
    claimed = next((f for f in HARNESS_FOLDERS if path.parts[1] == f.lstrip("/")), None)
    if claimed is not None:
        raise ValueError(f"{value!r}: {claimed} is not the task's to use (the harness's or the kernel's)")
    return str(path)


def check_mount_point(value: str) -> str:
    """A mount point: relative to the workspace (``hidden_tests``), or an absolute folder outside it
    (``/tests``, shown there by ``bwrap`` and ``docker`` only).

    Example: ``check_mount_point("/tests")`` -> ``"/tests"``; ``check_mount_point("../x")`` raises.
    """
    return check_container_path(value) if value.startswith("/") else check_sandbox_path(value)


MountPoint = Annotated[str, AfterValidator(check_mount_point)]
"""A workspace-relative path, or an absolute folder outside the workspace (see ``check_mount_point``)."""


def resolved(path: Path) -> Path:
    """``path.resolve()``; ``WorkspaceFileError`` when links chain too deep to follow (Python 3.11
    follows them by recursion) or in a loop, as the agent can leave them.

    Example: ``resolved(Path("w/l1499"))`` for ``l1499 -> l1498 -> … -> l0000 -> a.txt`` raises
    ``WorkspaceFileError`` (the system itself follows no more than 40 links).
    """
    why = f"{path.name!r} leads through links chained too deep to follow, or in a loop"
    try:
        path.stat()  # the system follows at most 40 links, without recursion (ELOOP past them)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise WorkspaceFileError(why) from exc
    try:
        return path.resolve()
    except (RecursionError, RuntimeError) as exc:
        raise WorkspaceFileError(why) from exc


def inside(root: Path, relative: str) -> Path:
    """``root / relative``, refusing anything that resolves outside ``root`` (e.g. through a symlink)."""
    target = resolved(root / relative)
    if not target.is_relative_to(root.resolve()):
        raise WorkspaceFileError(f"{relative!r} resolves outside the sandbox ({target})")
    return target


def split_glob(pattern: str) -> tuple[str, str]:
    """An absolute glob as (the folder before its first wildcard, the rest).

    Example: ``split_glob("/s/verdicts/pytest-*.json")`` -> ``("/s/verdicts", "pytest-*.json")``.
    """
    parts = PurePosixPath(pattern).parts
    literal = next((i for i, part in enumerate(parts) if any(c in part for c in "*?[")), len(parts) - 1)
    return str(PurePosixPath(*parts[:literal])), "/".join(parts[literal:])


def literal_prefix(pattern: str) -> tuple[str, str]:
    """A relative glob as (its steps before the first wildcard, the rest).

    Example: ``literal_prefix("src/**/*.py")`` -> ``("src", "**/*.py")``; ``literal_prefix("*.txt")``
    -> ``("", "*.txt")``.
    """
    parts = pattern.split("/")
    literal = next((i for i, part in enumerate(parts) if any(c in part for c in "*?[")), len(parts) - 1)
    return "/".join(parts[:literal]), "/".join(parts[literal:])


def file_glob(pattern: str) -> str:
    """``dir/**`` means every file below ``dir`` (pathlib alone would match only directories); ``.``
    and empty steps are dropped, so ``./src/*.py`` is ``src/*.py`` and ``.`` (a folder) is ``""``,
    which matches no file."""
    pattern = "/".join(part for part in pattern.split("/") if part not in ("", "."))
    return pattern + "/*" if pattern == "**" or pattern.endswith("/**") else pattern


def glob_regex(pattern: str) -> re.Pattern[str]:
    """A path glob as a regex: ``*`` and ``?`` stay inside one folder, ``**/`` spans folders.

    Example: ``glob_regex("src/**/*.py").fullmatch("src/a/b.py")`` matches; ``"src/*.py"`` does not
    match ``"src/a/b.py"``.
    """
    out, i = [], 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        elif pattern[i] == "[" and "]" in pattern[i + 1 :]:
            end = pattern.index("]", i + 1)
            out.append("[" + pattern[i + 1 : end].replace("!", "^", 1) + "]")
            i = end + 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out))
