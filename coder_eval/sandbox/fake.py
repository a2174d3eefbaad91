"""``FakeSandbox``: an in-memory sandbox for tests, the way an HTTP library ships a mock transport.

Example::

    sandbox = FakeSandbox({"out.txt": "hello\\n"}, on_exec=lambda argv, cwd: ExecResult(0, "ok\\n", "", 0.0))
    await sandbox.read_file("out.txt")        # b"hello\\n"
    await sandbox.glob("*.txt")                # ["out.txt"]
    (await sandbox.exec("make")).stdout        # "ok\\n"; sandbox.commands == [["/bin/bash", "-c", "make"]]

Files live in a dict; ``exec`` calls ``on_exec(argv, cwd)`` (default: exit 127, nothing ran). Criteria
that only read files and run commands through the verbs can be tested on it without any process.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO

from coder_eval.errors import WorkspaceFileError
from coder_eval.sandbox.base import ExecResult, file_glob, glob_regex
from coder_eval.sandbox.snapshot import write_files_tar

ExecHandler = Callable[[list[str], str], ExecResult]


def _not_run(argv: list[str], cwd: str) -> ExecResult:
    return ExecResult(127, "", f"{argv[0]}: FakeSandbox runs no commands", 0.0)


class FakeSandbox:
    """An in-memory workspace (``files``) with a scripted ``exec``."""

    driver = "fake"

    def __init__(
        self, files: Mapping[str, bytes | str] | None = None, *, on_exec: ExecHandler = _not_run
    ) -> None:
        self.workdir = "/workspace"
        self.env: dict[str, str] = {"HOME": "/home", "PATH": "/usr/bin:/bin"}
        self.files = {k: v.encode() if isinstance(v, str) else v for k, v in (files or {}).items()}
        self.on_exec = on_exec
        self.commands: list[list[str]] = []
        self.closed = False

    @classmethod
    def from_folder(cls, folder: Path, *, on_exec: ExecHandler = _not_run) -> FakeSandbox:
        """A fake holding a copy of every regular file under ``folder`` (links left out)."""
        files = {
            p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*"))
            if p.is_file() and not p.is_symlink()
        }
        return cls(files, on_exec=on_exec)

    async def exec(
        self,
        cmd: str | Sequence[str],
        *,
        timeout: float | None = None,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        stdin: str | None = None,
    ) -> ExecResult:
        argv = ["/bin/bash", "-c", cmd] if isinstance(cmd, str) else list(cmd)
        self.commands.append(argv)
        started = time.monotonic()
        result = self.on_exec(argv, cwd or ".")
        return ExecResult(
            result.exit_code, result.stdout, result.stderr, time.monotonic() - started, result.timed_out
        )

    async def read_file(self, path: str, *, limit: int | None = None) -> bytes:
        key = self._key(path)
        if key not in self.files:
            raise WorkspaceFileError(f"{path!r} is not a file in the sandbox")
        data = self.files[key]
        return data if limit is None else data[:limit]

    async def write_file(self, path: str, data: bytes | str, *, executable: bool = False) -> None:
        self.files[self._key(path)] = data.encode() if isinstance(data, str) else data

    async def glob(self, pattern: str, *, include_links: bool = False) -> list[str]:
        compiled = glob_regex(file_glob(pattern))
        return sorted(p for p in self.files if compiled.fullmatch(p))

    async def snapshot(self, out: IO[bytes], *, ignore: Sequence[str] = ()) -> None:
        write_files_tar(self.files, out, ignore=ignore)

    def wrap(
        self, argv: Sequence[str], *, cwd: str | None = None, env_names: Sequence[str] = ()
    ) -> list[str]:
        return list(argv)

    async def stop(self) -> None:
        return None

    async def close(self) -> None:
        self.closed = True

    def _key(self, path: str) -> str:
        prefix = self.workdir.rstrip("/") + "/"
        key = path[len(prefix) :] if path.startswith(prefix) else path.lstrip("./")
        if key.startswith("/") or ".." in key.split("/"):
            raise WorkspaceFileError(f"{path!r} resolves outside the sandbox")
        return key
