"""``SnapshotView``: a workspace snapshot read in memory, for graders that only read files.

Example::

    view = SnapshotView.load(Path("workspace.tar"))   # None: the snapshot needs a real sandbox
    await view.read_file("out/report.json")          # b'{"ok": true}'
    await view.glob("src/**/*.py")                   # ["src/app.py", "src/util/io.py"]
    await view.exec("make")                          # SandboxError: a view runs no commands

The verifier grades the agent's final workspace from a snapshot taken once every process the agent
started was dead. When every grader of a task only reads files (no ``commands`` in its ``needs``),
making a sandbox and extracting the snapshot into it buys nothing: the view answers ``read_file`` and
``glob`` from the snapshot itself, and no process, folder or container is made. It is used only where it
answers exactly as an extracted workspace would: a snapshot of regular files and folders under plain
relative names (no link of any kind, nothing a restore would drop), of at most ``MAX_BYTES`` in all.
Anything else returns ``None`` from :meth:`load`, and the verifier makes its sandbox as usual.
"""

from __future__ import annotations

import posixpath
import tarfile
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import IO, ClassVar

from coder_eval.errors import SandboxError, WorkspaceFileError
from coder_eval.sandbox.base import ExecResult, file_glob, glob_regex
from coder_eval.sandbox.snapshot import Dropped, write_files_tar

MAX_BYTES = 32 * 1024 * 1024
"""The largest snapshot (file contents, uncompressed) held in memory; a larger one is extracted."""


class SnapshotView:
    """The files of a workspace snapshot, served through the read verbs of the sandbox seam."""

    driver: ClassVar[str] = "snapshot"
    workdir: ClassVar[str] = "/workspace"
    """Nominal only: no command ever runs in a view."""

    def __init__(self, files: Mapping[str, bytes]) -> None:
        self.files = dict(files)
        self.env: dict[str, str] = {}
        self.dropped: list[Dropped] = []
        """Always empty: :meth:`load` refuses a snapshot from which a restore would drop anything."""

    @classmethod
    def load(cls, snapshot: Path | IO[bytes], max_bytes: int = MAX_BYTES) -> SnapshotView | None:
        """The view of ``snapshot`` (a tar, gzipped or not: a path, or a seekable file read from its
        start), or None where only an extracted workspace answers exactly: a link, a device, an odd
        name, or more than ``max_bytes`` of files."""
        files: dict[str, bytes] = {}
        folders: set[str] = set()
        total = 0
        try:
            with _open(snapshot) as tar:
                for member in tar:
                    name = member.name
                    if not _plain(name) or not (member.isfile() or member.isdir()):
                        return None
                    if member.isdir():
                        folders.add(name)
                        continue
                    total += member.size
                    handle = tar.extractfile(member)
                    if total > max_bytes or handle is None:
                        return None
                    files[name] = handle.read()
        except (tarfile.TarError, OSError, EOFError) as exc:
            raise SandboxError(f"cannot read the workspace snapshot: {exc}") from exc
        return cls(files) if _consistent(files, folders) else None

    # -- the read verbs --------------------------------------------------------------------------

    async def read_file(self, path: str, *, limit: int | None = None) -> bytes:
        """A file's bytes, as ``read_file`` of the restored workspace gives them."""
        key = self._key(path)
        if key not in self.files:
            raise WorkspaceFileError(f"{path!r} is not a file in the sandbox")
        data = self.files[key]
        return data if limit is None else data[:limit]

    async def glob(self, pattern: str, *, include_links: bool = False) -> list[str]:
        """The files matching ``pattern`` (a view holds no links, so ``include_links`` adds none)."""
        if PurePosixPath(pattern).is_absolute():
            raise SandboxError(f"{pattern!r}: a snapshot view lists workspace files only")
        parts = PurePosixPath(pattern).parts
        if ".." in parts:
            return []
        compiled = glob_regex(file_glob("/".join(parts)))
        return sorted(name for name in self.files if compiled.fullmatch(name))

    async def snapshot(self, out: IO[bytes], *, ignore: Sequence[str] = ()) -> None:
        """The files again as a tar stream (folders are implied by the files' names)."""
        write_files_tar(self.files, out, ignore=ignore)

    # -- what a view cannot do -------------------------------------------------------------------

    async def exec(
        self,
        cmd: str | Sequence[str],
        *,
        timeout: float | None = None,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        stdin: str | None = None,
    ) -> ExecResult:
        raise SandboxError(
            f"cannot run {cmd!r}: the workspace is served from its snapshot, which runs no commands "
            "(a criterion kind that runs commands must list 'commands' in its needs)"
        )

    async def write_file(self, path: str, data: bytes | str, *, executable: bool = False) -> None:
        raise SandboxError(f"cannot write {path!r}: a snapshot view is read-only")

    def wrap(
        self, argv: Sequence[str], *, cwd: str | None = None, env_names: Sequence[str] = ()
    ) -> list[str]:
        raise SandboxError("a snapshot view starts no programs")

    def host_socket(self, name: str) -> Path:
        raise SandboxError("a snapshot view serves no sockets")

    def oom_killed(self) -> bool:
        return False

    def limits_hit(self) -> list[str]:
        return []

    async def stop(self) -> None:
        return None

    async def close(self) -> None:
        self.files.clear()

    def _key(self, path: str) -> str:
        """``path`` as a member name; ``WorkspaceFileError`` when it leads out of the workspace."""
        if PurePosixPath(path).is_absolute():
            raise SandboxError(f"{path!r}: a snapshot view reads workspace files only")
        key = posixpath.normpath(path)
        if key == ".." or key.startswith("../"):
            raise WorkspaceFileError(f"{path!r} resolves outside the sandbox")
        return key


def _open(snapshot: Path | IO[bytes]) -> tarfile.TarFile:
    if isinstance(snapshot, Path):
        return tarfile.open(snapshot, mode="r|*")
    snapshot.seek(0)
    return tarfile.open(fileobj=snapshot, mode="r|*")


def _plain(name: str) -> bool:
    """A relative name in normal form (``a/b.txt``): nothing a restore would rewrite or refuse."""
    return (
        name not in ("", ".", "..") and not name.startswith(("/", "../")) and posixpath.normpath(name) == name
    )


def _consistent(files: Mapping[str, bytes], folders: set[str]) -> bool:
    """No name is both a file and a folder (a restore would keep only one of them)."""
    parents = {parent for name in files for parent in _parents(name)}
    return not (parents & files.keys()) and not (folders & files.keys())


def _parents(name: str) -> list[str]:
    parts = name.split("/")[:-1]
    return ["/".join(parts[: i + 1]) for i in range(len(parts))]
