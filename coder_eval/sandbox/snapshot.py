"""Workspace snapshots: a tar of the workspace out, a safe extraction in.

Example::

    with open("work.tar", "wb") as out:
        write_tar(workspace, out, ignore=["node_modules/", "*.log", "!keep.log"])
    dropped = extract_tar(Path("work.tar"), fresh_workspace)   # ["link-out -> /etc (link outside)"]
    retar(docker_cp_stdout, out, ignore=["*.log"])            # an engine's tar of the workspace folder

The snapshot is what the verifier grades, so it carries only what a workspace may hold: regular files,
directories and symbolic links. Extraction is hostile-input safe: a member that would land outside the
destination, a link that leads out of it, a device or a pipe is dropped and named in the returned
list, never followed; file modes lose set-uid/set-gid bits.

Both ways are bounded (:class:`Bounds`, from ``sandbox.limits``): by the files' apparent size (a
sparse file of 2 GB counts 2 GB, whatever it holds on disk), by the number of entries, by how deep
folders nest, and by the length of a path (:data:`MAX_PATH_BYTES`, which any sandbox folder can
still hold). A workspace past any of them is refused with :class:`WorkspaceTooLarge` before its tar
is written: a host folder is measured first (names and ``lstat`` only, walked without recursion), an
engine's stream is stopped at the first member past the bound.
"""

from __future__ import annotations

import errno
import io
import os
import stat
import tarfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, NamedTuple

import pathspec

from coder_eval.errors import SandboxError
from coder_eval.sandbox.trees import walk

if TYPE_CHECKING:
    from coder_eval.sandbox.spec import Limits

MB = 1024 * 1024

DEFAULT_IGNORE: tuple[str, ...] = ()
"""Patterns always left out (none: a snapshot holds the workspace as the agent left it)."""


MAX_PATH_BYTES = 3584
"""The longest workspace path a snapshot takes (bytes): with the folder of any sandbox before it
(``/tmp/coder_eval-…/work/``, a container's ``working_dir``) it must still fit the 4,096 bytes the
system takes for a path, or no sandbox could restore it."""


class WorkspaceTooLarge(SandboxError):
    """The workspace passed ``sandbox.limits.max_workspace_mb``, ``max_workspace_files`` or
    ``max_workspace_depth``, or holds a path past :data:`MAX_PATH_BYTES`: the agent's resource limit,
    not the harness's fault."""


@dataclass
class Bounds:
    """How much a snapshot may hold: bytes (apparent sizes of files), entries, levels of folders, and
    the bytes of one path; None: no bound.

    Example: ``Bounds.of(Limits(max_workspace_mb=10))`` counts each member with :meth:`count`,
    which raises ``WorkspaceTooLarge`` at the first one past a bound (``a/b/c.txt`` is 3 levels deep).
    """

    max_bytes: int | None = None
    max_entries: int | None = None
    max_depth: int | None = None
    max_path_bytes: int | None = MAX_PATH_BYTES
    bytes: int = 0
    entries: int = 0

    @classmethod
    def of(cls, limits: Limits) -> Bounds:
        mb, files, depth = limits.max_workspace_mb, limits.max_workspace_files, limits.max_workspace_depth
        return cls(None if mb is None else mb * MB, files, depth)

    def count(self, name: str, size: int) -> None:
        """Count one entry of ``size`` bytes named ``name`` (relative to the workspace)."""
        self.bytes += size
        self.entries += 1
        self.check(name, size)

    def check(self, name: str, size: int) -> None:
        """``WorkspaceTooLarge`` when the counts so far (the last entry: ``name``, ``size``) pass a bound."""
        if self.max_entries is not None and self.entries > self.max_entries:
            raise WorkspaceTooLarge(
                f"the workspace holds more than {self.max_entries} files, folders and links "
                "(sandbox.limits.max_workspace_files)"
            )
        if self.max_bytes is not None and self.bytes > self.max_bytes:
            raise WorkspaceTooLarge(
                f"the workspace's files pass {self.max_bytes // MB} MB at {name!r} ({size} bytes; "
                "sandbox.limits.max_workspace_mb counts apparent sizes)"
            )
        self.check_shape(name)

    def check_shape(self, name: str) -> None:
        """``WorkspaceTooLarge`` when ``name`` nests deeper than the bound, or is too long a path."""
        levels = name.strip("/").count("/") + 1
        if self.max_depth is not None and levels > self.max_depth:
            raise WorkspaceTooLarge(
                f"the workspace nests folders deeper than {self.max_depth} levels ({shown(name)} is "
                f"{levels} deep; sandbox.limits.max_workspace_depth)"
            )
        length = len(os.fsencode(name))
        if self.max_path_bytes is not None and length > self.max_path_bytes:
            raise WorkspaceTooLarge(
                f"the workspace holds a path longer than {self.max_path_bytes} bytes ({shown(name)}, "
                f"{length} bytes, {levels} levels deep): no sandbox folder could hold it"
            )


def shown(name: str, head: int = 48, tail: int = 32) -> str:
    """A path for a message: whole when short, else its start and end.

    Example: ``shown("d/" * 1500 + "leaf")`` -> ``'d/d/…/d/leaf'`` (with more of each end).
    """
    if len(name) <= head + tail + 1:
        return repr(name)
    return repr(f"{name[:head]}…{name[-tail:]}")


def measured(found: Mapping[str, Any], bounds: Bounds) -> WorkspaceTooLarge | None:
    """What a measure elsewhere (the docker helper's: ``{name, size, entries, bytes}`` at the first
    entry past a bound, ``{}`` within them) means for ``bounds``: the error to raise, or None."""
    if not found:
        return None
    bounds.entries, bounds.bytes = int(found["entries"]), int(found["bytes"])
    try:
        bounds.check(str(found["name"]), int(found["size"]))
    except WorkspaceTooLarge as exc:
        return exc
    return None


def measure(root: Path, bounds: Bounds) -> None:
    """Count every entry under ``root`` into ``bounds`` (``WorkspaceTooLarge`` at the first past it),
    by its name relative to ``root``, with a stack of folders (no recursion)."""
    pending = [(str(root), "")]
    while pending:
        folder, prefix = pending.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue  # gone, or unreadable: the tar leaves it out too
        for entry in entries:
            name = prefix + entry.name
            bounds.check_shape(name)  # before the entry is read: a path past the bound may not open
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            bounds.count(name, info.st_size if stat.S_ISREG(info.st_mode) else 0)
            if stat.S_ISDIR(info.st_mode):
                pending.append((entry.path, name + "/"))


def ignore_spec(patterns: Sequence[str]) -> pathspec.PathSpec[Any]:
    """A gitignore-style matcher (``dir/``, ``*.log``, ``!keep.log``)."""
    return pathspec.PathSpec.from_lines("gitignore", [*DEFAULT_IGNORE, *patterns])


def write_tar(root: Path, out: IO[bytes], *, ignore: Sequence[str] = (), bounds: Bounds | None = None) -> int:
    """Write ``root`` as an uncompressed tar to ``out``; returns the number of members.

    Sockets, pipes and devices are left out (reading a pipe would block). With ``bounds`` the whole
    folder is measured first, and nothing is written when it is past them.
    """
    if bounds is not None:
        measure(root, bounds)
    spec = ignore_spec(ignore)
    count = 0
    with tarfile.open(fileobj=out, mode="w|", format=tarfile.PAX_FORMAT) as tar:
        for parent, dirnames, filenames in walk(root):
            relative_parent = Path(parent).relative_to(root)
            kept_dirs = []
            for name in sorted(dirnames):
                relative = (relative_parent / name).as_posix()
                if spec.match_file(relative + "/"):
                    continue
                kept_dirs.append(name)
                count += _add(tar, root, relative)
            dirnames[:] = kept_dirs
            for name in sorted(filenames):
                relative = (relative_parent / name).as_posix()
                if not spec.match_file(relative):
                    count += _add(tar, root, relative)
    return count


def _add(tar: tarfile.TarFile, root: Path, relative: str) -> int:
    path = root / relative
    try:
        mode = path.lstat().st_mode
    except OSError:
        return 0  # gone while we walked
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISLNK(mode)):
        return 0
    info = tar.gettarinfo(str(path), arcname=relative)
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    if info.isfile():
        try:
            with path.open("rb") as handle:
                tar.addfile(info, handle)
        except OSError:
            return 0
    else:
        tar.addfile(info)
    return 1


def write_files_tar(files: Mapping[str, bytes], out: IO[bytes], *, ignore: Sequence[str] = ()) -> int:
    """Write in-memory ``files`` (workspace path -> bytes) as a snapshot tar stream, leaving out what
    ``ignore`` matches (their folders are implied by their names); returns the number written."""
    spec = ignore_spec(ignore)
    count = 0
    with tarfile.open(fileobj=out, mode="w|", format=tarfile.PAX_FORMAT) as tar:
        for name, data in sorted(files.items()):
            if spec.match_file(name):
                continue
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), 0o644
            tar.addfile(info, io.BytesIO(data))
            count += 1
    return count


def retar(
    source: IO[bytes], out: IO[bytes], *, ignore: Sequence[str] = (), bounds: Bounds | None = None
) -> int:
    """Rewrite a tar stream of the workspace *folder* (``docker cp C:/workspace -``, whose members
    all start with the folder's name) as a snapshot like :func:`write_tar`'s: the folder's name
    stripped, ``ignore`` applied, only files, folders and links kept, owners dropped. Returns the
    number of members written. Every member counts into ``bounds``, read or left out."""
    spec = ignore_spec(ignore)
    skipped: list[str] = []
    kept: set[str] = set()
    count = 0
    with (
        tarfile.open(fileobj=source, mode="r|") as reader,
        tarfile.open(fileobj=out, mode="w|", format=tarfile.PAX_FORMAT) as writer,
    ):
        for member in reader:
            name = member.name.partition("/")[2].rstrip("/")
            if name and bounds is not None:
                bounds.count(name, member.size if member.isfile() else 0)
            if not name or any(name.startswith(prefix) for prefix in skipped):
                continue
            if member.isdir() and spec.match_file(name + "/"):
                skipped.append(name + "/")
                continue
            if not member.isdir() and spec.match_file(name):
                continue
            if not _keepable(member, kept):
                continue
            member.name, member.uid, member.gid, member.uname, member.gname = name, 0, 0, "", ""
            if member.islnk():
                member.linkname = member.linkname.partition("/")[2]
            member.pax_headers = {k: v for k, v in member.pax_headers.items() if k not in _REWRITTEN}
            writer.addfile(member, reader.extractfile(member) if member.isfile() else None)
            kept.add(name)
            count += 1
    return count


_REWRITTEN = frozenset({"path", "linkpath", "uid", "gid", "uname", "gname", "hdrcharset"})
"""PAX records of fields :func:`retar` rewrites: tarfile writes a record it is given over the field
(a name that is not ASCII, or longer than 100 bytes, comes in a ``path`` record)."""


def _keepable(member: tarfile.TarInfo, kept: set[str]) -> bool:
    """Files, folders, links; a hard link only when its target was kept."""
    if member.islnk():
        return member.linkname.partition("/")[2] in kept
    return member.isfile() or member.isdir() or member.issym()


LOOP_CHECKS = 3
"""Walks that must each give up on a link's target before it counts as a loop (``_loops``)."""


def _loops(target: Path) -> bool:
    """The system gives up on ``target`` for its links (more than 40 on the way, or a loop): the
    filter would follow them one recursion a link (Python 3.11's ``realpath``). Confirmed by
    ``LOOP_CHECKS`` walks: Linux carries the links a lock-free walk followed into its locked retry
    (one is made when a link's access time needs writing while a rename runs anywhere on the system),
    so the first walk of fresh links can give up on a chain within the limit."""
    for _ in range(LOOP_CHECKS):
        try:
            target.stat()
        except OSError as exc:
            if exc.errno != errno.ELOOP:
                return False
        else:
            return False
    return True


class Dropped(NamedTuple):
    """A snapshot member left out of a restored workspace, and why."""

    name: str
    reason: str

    def __str__(self) -> str:
        return f"{self.name} ({self.reason})"


def extract_tar(archive: Path | IO[bytes], destination: Path, bounds: Bounds | None = None) -> list[Dropped]:
    """Extract a workspace snapshot into ``destination``; returns what was dropped and why. A seekable
    file is read from its start; a stream (an engine's ``docker cp`` output) from where it is. Past
    ``bounds``, ``WorkspaceTooLarge`` (what was extracted so far stays)."""
    dropped: list[Dropped] = []

    def keep(member: tarfile.TarInfo, path: str) -> tarfile.TarInfo | None:
        if bounds is not None:
            bounds.count(member.name, member.size if member.isfile() else 0)
        if not (member.isfile() or member.isdir() or member.issym() or member.islnk()):
            dropped.append(Dropped(member.name, "not a file, directory or link"))
            return None
        if member.issym() and _loops(Path(path, member.name).parent / member.linkname):
            dropped.append(Dropped(member.name, "a link through more links than the system follows"))
            return None
        try:
            return tarfile.data_filter(member, path)
        except tarfile.FilterError as exc:
            dropped.append(Dropped(member.name, str(exc)))
        except RecursionError:  # the filter follows a chain of links the agent made, recursively
            dropped.append(Dropped(member.name, "a link through links chained too deep to follow"))
        return None

    try:
        if isinstance(archive, Path):
            with tarfile.open(archive, mode="r:*") as tar:
                tar.extractall(destination, filter=keep)
        else:
            if archive.seekable():
                archive.seek(0)
            with tarfile.open(fileobj=archive, mode="r|*") as tar:
                tar.extractall(destination, filter=keep)
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise SandboxError(f"cannot extract the workspace snapshot into {destination}: {exc}") from exc
    return dropped
