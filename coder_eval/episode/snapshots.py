"""Workspace snapshots kept in the run directory, so a finished run can be re-graded.

Example::

    target = SnapshotTarget(run.snapshot_path("fix--default--r0"), max_bytes=100 * MB)
    record = keep_snapshot(workspace_tar, target, ignore=["node_modules/"])   # a file or a tar's path
    record.file, record.bytes          # ('snapshots/fix--default--r0.tar.gz', 2048)

The verifier always gets the whole workspace (the uncompressed tar the runner takes in the ``stop``
phase, held in memory); what is *kept* leaves out what the task's ``sandbox.ignore_patterns`` match,
with the same gitignore rules as ``Sandbox.snapshot`` (an ignored folder is left out whole), and is
gzip-compressed.
A snapshot that would pass the per-episode cap is not kept at all (a cut-off tar would re-grade a
workspace the agent never left); the record's ``note`` says so, and the episode's ``notes`` too.
"""

from __future__ import annotations

import contextlib
import copy
import errno
import tarfile
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, NamedTuple

from coder_eval.errors import RunWriteError
from coder_eval.sandbox.base import Sandbox
from coder_eval.sandbox.snapshot import ignore_spec
from coder_eval.trajectory import WorkspaceSnapshot

MB = 1_000_000
DEFAULT_MAX_MB = 100.0
"""Per-episode cap on a kept snapshot (compressed), unless ``--snapshot-max-mb`` says otherwise."""
DEFAULT_MAX_BYTES = int(DEFAULT_MAX_MB * MB)
UNWRITABLE = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.ENAMETOOLONG})
"""What stops the run, rather than leave a snapshot out: the run directory itself cannot be written."""
COMPRESS_LEVEL = 6
"""gzip level: most of level 9's saving at a fraction of its time."""


@dataclass(frozen=True)
class SnapshotTarget:
    """Where one episode's snapshot goes (``runs/<id>/snapshots/<episode_id>.tar.gz``) and its cap."""

    path: Path
    max_bytes: int

    @property
    def relative(self) -> str:
        """The file as the trajectory names it: relative to the run directory."""
        return f"{self.path.parent.name}/{self.path.name}"


class _OverCap(Exception):
    """The compressed snapshot passed the cap while it was being written."""


class _CappedFile:
    """A binary file that refuses to grow past ``limit`` bytes (raises ``_OverCap``)."""

    def __init__(self, path: Path, limit: int) -> None:
        self._file = path.open("wb")
        self.limit = limit
        self.size = 0

    def write(self, data: bytes) -> int:
        self.size += len(data)
        if self.size > self.limit:
            raise _OverCap
        return self._file.write(data)

    def flush(self) -> None:
        self._file.flush()

    def close(self) -> None:
        self._file.close()


class _Copied(NamedTuple):
    entries: int
    left_out: int


def keep_snapshot(
    source: Path | IO[bytes], target: SnapshotTarget, ignore: Sequence[str] = ()
) -> WorkspaceSnapshot:
    """Copy the workspace tar ``source`` (a path, or a seekable file read from its start) to
    ``target`` as gzip, leaving out what ``ignore`` matches.

    A snapshot over the cap, or one that cannot be read, is not kept, and the record says why
    (keeping it is a convenience; the episode's grade never depends on it). A run directory that
    cannot be written (full, read-only) raises ``RunWriteError``: the run stops there, the episode
    unfinished, rather than go on losing what it cannot write.
    """
    started = time.perf_counter()
    partial = target.path.with_name(f".{target.path.name}.partial")
    try:
        copied = _write(source, partial, target.max_bytes, ignore)
        partial.replace(target.path)
    except (_OverCap, OSError, tarfile.TarError) as exc:
        with contextlib.suppress(OSError):
            partial.unlink(missing_ok=True)
        if isinstance(exc, OSError) and exc.errno in UNWRITABLE:
            raise RunWriteError.of(target.path, exc) from exc
        why = f"it passed the {target.max_bytes / MB:g} MB cap (--snapshot-max-mb)"
        if not isinstance(exc, _OverCap):
            why = f"it could not be written ({type(exc).__name__}: {exc})"
        note = f"workspace snapshot not kept: {why}; criteria that read the workspace cannot be re-graded"
        return WorkspaceSnapshot(note=note, seconds=time.perf_counter() - started)
    return WorkspaceSnapshot(
        file=target.relative,
        bytes=target.path.stat().st_size,
        entries=copied.entries,
        left_out=copied.left_out,
        seconds=time.perf_counter() - started,
    )


def _write(source: Path | IO[bytes], partial: Path, max_bytes: int, ignore: Sequence[str]) -> _Copied:
    partial.parent.mkdir(parents=True, exist_ok=True)
    out = _CappedFile(partial, max_bytes)
    try:
        with tarfile.open(fileobj=out, mode="w:gz", compresslevel=COMPRESS_LEVEL) as tar:  # type: ignore[call-overload]
            return _copy_members(source, tar, ignore)
    finally:
        out.close()


def _copy_members(source: Path | IO[bytes], out: tarfile.TarFile, ignore: Sequence[str]) -> _Copied:
    """Every member of ``source`` into ``out`` except the ignored ones (an ignored folder whole)."""
    spec = ignore_spec(ignore)
    pruned: list[str] = []
    kept: set[str] = set()
    left_out = 0
    with _open_tar(source) as tar:
        for member in tar:
            name = member.name
            inside_pruned = any(name.startswith(folder + "/") for folder in pruned)
            if inside_pruned or (member.isdir() and spec.match_file(name + "/")):
                pruned += [] if inside_pruned else [name]
                left_out += 1
            elif not member.isdir() and spec.match_file(name):
                left_out += 1
            else:
                data = tar.extractfile(member) if member.isfile() or member.islnk() else None
                if member.islnk() and member.linkname not in kept:  # its first name was left out
                    member = _as_regular_file(member, tar.getmember(member.linkname).size)
                out.addfile(member, None if member.islnk() else data)
                kept.add(name)
    return _Copied(len(kept), left_out)


def _open_tar(source: Path | IO[bytes]) -> tarfile.TarFile:
    if isinstance(source, Path):
        return tarfile.open(source, mode="r:")
    source.seek(0)
    return tarfile.open(fileobj=source, mode="r:")


def _as_regular_file(link: tarfile.TarInfo, size: int) -> tarfile.TarInfo:
    """A hard link kept as a file of its own (the name it shared the data with is left out)."""
    regular = copy.copy(link)
    regular.type, regular.size, regular.linkname = tarfile.REGTYPE, size, ""
    return regular


SPOOL_BYTES = 16 * 1024 * 1024
"""Up to this size a workspace snapshot stays in memory; a larger one spills to an unnamed temporary file."""


async def take_snapshot(sandbox: Sandbox) -> tempfile.SpooledTemporaryFile[bytes]:
    """The workspace as a tar (every file: the verifier needs them all), rewound. It is held in
    memory, or in an unnamed file that is gone once closed (or once the harness is, however it ends),
    so no scratch folder is made and none is left behind."""
    spool: tempfile.SpooledTemporaryFile[bytes] = tempfile.SpooledTemporaryFile(max_size=SPOOL_BYTES)  # noqa: SIM115 (the caller closes it)
    try:
        await sandbox.snapshot(spool)
    except BaseException:
        spool.close()
        raise
    spool.seek(0)
    return spool
