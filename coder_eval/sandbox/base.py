"""The sandbox seam: a working directory, an environment, ``exec`` and ``close``.

Example::

    sandbox = await TempdirSandbox.create(task.sandbox)
    result = await sandbox.exec("pytest -q", timeout=60)
    await sandbox.close()
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Annotated, Protocol

from pydantic import AfterValidator

from coder_eval.errors import SandboxError


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
    """A place where one episode runs; ``root`` is the host path of its working directory."""

    root: Path
    env: dict[str, str]

    async def exec(
        self,
        cmd: str | Sequence[str],
        *,
        timeout: float | None = None,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        stdin: str | None = None,
    ) -> ExecResult:
        """Run ``cmd`` (a shell string or argv) inside the sandbox; kill its process group on timeout."""
        ...

    async def stop_processes(self) -> None:
        """Kill every process the sandbox's commands left running (called before grading)."""
        ...

    async def close(self) -> None:
        """Remove the sandbox (idempotent)."""
        ...

    def wrap(self, argv: Sequence[str], *, cwd: Path) -> list[str]:
        """``argv`` as it must be started to run inside the sandbox (bwrap adds its prefix)."""
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


def inside(root: Path, relative: str) -> Path:
    """``root / relative``, refusing anything that resolves outside ``root`` (e.g. through a symlink)."""
    target = (root / relative).resolve()
    if not target.is_relative_to(root.resolve()):
        raise SandboxError(f"{relative!r} resolves outside the sandbox ({target})")
    return target
