"""Task bundles: what an episode needs from the suite, packed once, keyed by its sha256, unpacked on a
worker that has no view of the suite.

Example::

    bundle = pack(plan.task.source_dir)               # on the submitter: the task's folder, as bytes
    root = unpack(bundle.sha256, bundle.data, cache)  # on a worker: cache/<sha256>, checked first
    plan = relocated(plan, root)                      # every path of the task now names the copy

A bundle is the task's folder: the folder of its task file, against which the loader resolves every
path the task names (templates, hidden tests, fixtures, references, scripts, plugins and skills,
Dockerfiles, package-environment specs), and which graders see as ``TASK_DIR``. It is a gzipped tar
whose bytes depend on the files alone (sorted names, no times, owners or permissions beyond the
executable bit; ``__pycache__`` left out), so the same folder is the same bundle on every submitter
and a worker caches it by hash. A worker refuses bytes that do not hash to the name they came under
(``BundleError``) and unpacks with tarfile's ``data`` filter (no absolute names, no ``..``, no link
out of the bundle, no device). The copy lies in the worker's own scratch folder, outside every
sandbox: hidden tests and references reach only the verifier's sandbox, exactly as from the suite.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import io
import math
import os
import shutil
import stat
import tarfile
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, BinaryIO, Literal, NamedTuple

from pydantic import BaseModel

from coder_eval.episode.plan import EpisodePlan
from coder_eval.errors import InputError
from coder_eval.task import TaskSpec

SKIPPED = frozenset({"__pycache__"})
"""Folders that are not the task's: the interpreter writes them, so they would change the hash."""
MAX_MB_VARIABLE = "CODER_EVAL_BUNDLE_MAX_MB"
DEFAULT_MAX_MB = 256.0
"""The most a task folder (a bundle) may hold, in MB of files, unless ``$CODER_EVAL_BUNDLE_MAX_MB``
says otherwise: a bundle travels through the dask scheduler's memory."""
MB = 1024 * 1024


class BundleError(RuntimeError):
    """A bundle a worker refuses: its bytes are not the ones its hash names, or it is not a bundle."""


@dataclass(frozen=True)
class Bundle:
    """A packed task folder: its sha256 (hex) and its bytes."""

    sha256: str
    data: bytes

    @property
    def key(self) -> str:
        """Its name on the dask cluster: the same folder is the same key, on every submitter."""
        return f"coder_eval-bundle-{self.sha256}"


class Member(NamedTuple):
    """One thing a folder holds, as it is packed or copied: its name under the folder, where its
    bytes are (a link inside the folder: its target, relative), and its size."""

    name: str
    path: Path
    kind: Literal["dir", "file", "link"]
    size: int = 0
    target: str = ""


def max_bytes() -> int:
    """``$CODER_EVAL_BUNDLE_MAX_MB`` (a positive number) in bytes, else ``DEFAULT_MAX_MB``."""
    given = os.environ.get(MAX_MB_VARIABLE)
    try:
        mb = float(given) if given else DEFAULT_MAX_MB
    except ValueError:
        mb = -1.0
    if not mb > 0:
        raise InputError(f"{MAX_MB_VARIABLE}={given!r}: not a positive number of MB")
    return int(mb * MB)


def members(root: Path, boundary: Path | None = None) -> list[Member]:
    """What of ``root`` is packed (a folder, or one file), in name order, checked before a byte is
    read: folders, regular files, and links whose target lies inside ``root``; a link to a file
    elsewhere inside ``boundary`` (default ``root``) counts as that file. FIFOs, sockets and devices
    are left out, never opened. ``InputError`` names a link out of ``boundary`` (it would name
    nothing, or another thing, where the copy runs) and a root over ``max_bytes()``."""
    boundary = boundary or root
    found: list[Member] = []
    _walk(root, root, boundary, "", found, set())
    total, cap = sum(m.size for m in found), max_bytes()
    if total > cap:
        enough = 2 ** math.ceil(math.log2(total / MB))
        raise InputError(
            f"{root}: {total / MB:.1f} MB of files, over the {cap / MB:g} MB a task's files may take (a run "
            "copies them before its first episode, and they travel to dask workers); move what the task "
            f"does not need out of it, or raise the cap: {MAX_MB_VARIABLE}={enough}"
        )
    return found


def _walk(path: Path, root: Path, boundary: Path, name: str, found: list[Member], seen: set[Path]) -> None:
    try:
        info = path.lstat() if name else path.stat()
    except OSError as exc:
        raise InputError(f"{path}: cannot be read to pack the task's files: {exc.strerror or exc}") from exc
    if stat.S_ISLNK(info.st_mode):
        _link(path, root, boundary, name, found, seen)
    elif stat.S_ISDIR(info.st_mode):
        if name:
            found.append(Member(name, path, "dir"))
        _children(path, root, boundary, name, found, seen)
    elif stat.S_ISREG(info.st_mode):  # a root that is a link: its file
        found.append(Member(name, path if name else path.resolve(), "file", info.st_size))


def _link(path: Path, root: Path, boundary: Path, name: str, found: list[Member], seen: set[Path]) -> None:
    """A link: kept (relative) when it stays inside ``root``; its file when it points elsewhere
    inside ``boundary``; refused when it points out of it."""
    try:
        target = path.resolve()
    except (OSError, RuntimeError) as exc:
        raise InputError(f"{path}: a symbolic link that cannot be followed ({exc}); remove it") from exc
    if not _under(target, boundary.resolve()):
        raise InputError(
            f"{path}: a symbolic link out of the task's folder {boundary} (to {path.readlink()}); the "
            "episode would read another file, or none, where the task's files are copied: copy what it "
            "names into the folder, or remove the link"
        )
    if _under(target, root.resolve()):
        found.append(Member(name, path, "link", target=os.path.relpath(target, path.parent.resolve())))
    elif target.is_file() and target not in seen:
        found.append(Member(name, target, "file", target.stat().st_size))
    elif target.is_dir() and target not in seen:
        seen.add(target)
        found.append(Member(name, path, "dir"))
        _children(target, root, boundary, name, found, seen)


def _children(
    folder: Path, root: Path, boundary: Path, name: str, found: list[Member], seen: set[Path]
) -> None:
    for child in sorted(entry.name for entry in folder.iterdir()):
        if child not in SKIPPED:
            _walk(folder / child, root, boundary, f"{name}/{child}" if name else child, found, seen)


def _under(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def pack_file(folder: Path, target: Path) -> str:
    """Pack ``folder`` (see the module docstring) into the file ``target``, streaming each file
    through; returns its sha256. ``InputError`` as ``members`` says, or when a file changes while
    it is packed."""
    found = members(folder)
    with target.open("wb") as raw:
        hashed = _Hashing(raw)
        with (
            gzip.GzipFile(filename="", fileobj=hashed, mode="wb", mtime=0, compresslevel=6) as zipped,
            tarfile.open(fileobj=zipped, mode="w", format=tarfile.PAX_FORMAT) as tar,
        ):
            for member in found:
                _add(tar, member)
    return hashed.digest.hexdigest()


def pack(folder: Path) -> Bundle:
    """The bundle of ``folder`` in memory (``pack_file`` keeps it on disk)."""
    with tempfile.TemporaryDirectory(prefix="coder_eval-pack-") as scratch:
        path = Path(scratch) / "bundle.tar.gz"
        sha256 = pack_file(folder, path)
        return Bundle(sha256, path.read_bytes())


class _Hashing:
    """A binary file that hashes what is written through it."""

    def __init__(self, raw: BinaryIO) -> None:
        self.raw, self.digest = raw, hashlib.sha256()

    def write(self, data: bytes) -> int:
        self.digest.update(data)
        return self.raw.write(data)

    def flush(self) -> None:
        self.raw.flush()


def _add(tar: tarfile.TarFile, member: Member) -> None:
    info = tarfile.TarInfo(member.name)
    if member.kind == "link":
        info.type, info.linkname, info.mode = tarfile.SYMTYPE, member.target, 0o777
        tar.addfile(info)
    elif member.kind == "dir":
        info.type, info.mode = tarfile.DIRTYPE, 0o755
        tar.addfile(info)
    else:
        with open_regular(member.path) as (handle, status):
            if handle is None:
                return  # no longer a regular file: left out, never read
            info.size, info.mode = status.st_size, 0o755 if status.st_mode & 0o111 else 0o644
            try:
                tar.addfile(info, handle)
            except OSError as exc:
                raise InputError(f"{member.path}: changed while it was packed ({exc}); run again") from exc


@contextlib.contextmanager
def open_regular(path: Path) -> Iterator[tuple[BinaryIO | None, os.stat_result]]:
    """``path`` opened for reading when it is (still) a regular file, else None; a FIFO is opened
    without blocking and never read."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    except OSError as exc:
        raise InputError(f"{path}: cannot be read to pack the task's files: {exc.strerror or exc}") from exc
    status = os.fstat(fd)
    if not stat.S_ISREG(status.st_mode):
        os.close(fd)
        yield None, status
        return
    with os.fdopen(fd, "rb") as handle:
        yield handle, status


def unpack(sha256: str, data: bytes, cache: Path) -> Path:
    """``cache/<sha256>``, holding the bundle: unpacked here unless an earlier episode did; bytes that
    do not hash to ``sha256`` are refused before anything is written."""
    root = cache / sha256
    if root.is_dir():
        return root
    actual = hashlib.sha256(data).hexdigest()
    if actual != sha256:
        raise BundleError(
            f"task bundle {sha256[:12]}: refused, its bytes hash to {actual[:12]} (changed on the way)"
        )
    return unpack_file(sha256, io.BytesIO(data), cache)


def unpack_file(sha256: str, data: BinaryIO, cache: Path) -> Path:
    """``cache/<sha256>``, the bundle read from ``data`` (a file, streamed) unpacked into it."""
    root = cache / sha256
    cache.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{sha256[:12]}-", dir=cache))
    try:
        with tarfile.open(fileobj=data, mode="r:gz") as tar:
            tar.extractall(staging, filter="data")
        with contextlib.suppress(OSError):  # another episode unpacked it meanwhile: theirs stays
            staging.rename(root)
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise BundleError(f"task bundle {sha256[:12]}: not a bundle ({exc})") from exc
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return root


def relocated(plan: EpisodePlan, root: Path | Mapping[str, str]) -> EpisodePlan:
    """``plan`` with every path under its task's folder moved under ``root`` (the unpacked bundle),
    or, given moves (a path -> its copy), every path under each moved to its copy."""
    moves = {str(plan.task.source_dir): str(root)} if isinstance(root, Path) else dict(root)
    return replace(plan, task=_moved(plan.task, moves))


def _moved(value: Any, moves: Mapping[str, str]) -> Any:
    """``value`` with each path-like string under a path of ``moves`` (it, or ``it/...``; the
    longest that holds it) moved under its copy."""
    if isinstance(value, BaseModel):
        update = {name: _moved(getattr(value, name), moves) for name in type(value).model_fields}
        changed = {k: v for k, v in update.items() if v is not getattr(value, k)}
        return value.model_copy(update=changed) if changed else value
    if isinstance(value, Path):
        text = str(value)
        moved = _moved(text, moves)
        return Path(moved) if moved != text else value
    if isinstance(value, str):
        for old in sorted(moves, key=len, reverse=True):
            if value == old or value.startswith(old + "/"):
                return moves[old] + value[len(old) :]
        return value
    if isinstance(value, list | tuple):
        items = [_moved(v, moves) for v in value]
        return type(value)(items) if any(a is not b for a, b in zip(items, value, strict=True)) else value
    if isinstance(value, dict):
        moved = {k: _moved(v, moves) for k, v in value.items()}
        return moved if any(moved[k] is not value[k] for k in value) else value
    return value


def check_travels(task: TaskSpec) -> None:
    """``InputError`` when ``task`` names a file beside its folder (``../shared/...``): only the task's
    folder travels to a worker, so such a file would be missing there."""
    folder = task.source_dir
    outside = sorted(p for p in _paths(task) if _beside(p, folder))
    if outside:
        raise InputError(
            f"{task.source_path}: names {outside[0]}, outside the task's folder {folder}; on the dask "
            "executor only the task's folder travels to the workers: move the file into it"
        )


def _beside(path: str, folder: Path) -> bool:
    parent = str(folder.parent)
    return path.startswith(parent + "/") and not (path == str(folder) or path.startswith(f"{folder}/"))


def _paths(value: Any) -> list[str]:
    if isinstance(value, BaseModel):
        return [p for name in type(value).model_fields for p in _paths(getattr(value, name))]
    if isinstance(value, str | Path):
        text = str(value)
        return [text] if text.startswith("/") and "\n" not in text else []
    if isinstance(value, list | tuple):
        return [p for v in value for p in _paths(v)]
    if isinstance(value, dict):
        return [p for v in value.values() for p in _paths(v)]
    return []
