"""The files a resolved task reads: their content hash, and those that are not regular files.

Example::

    task_hash(task)       # 'sha256:3f2a…': recorded in each episode_start, compared by --resume
    special_files(task)   # ['/suite/fixtures/app/pipe (a FIFO)']: left out of every sandbox
    task_hash(task, {"/suite/app": "/tmp/frozen/app"})   # the same hash, the bytes read from a copy

A task reads the files and folders its fields name (template folders, starter files, hidden tests,
the reference folder, scripted model scripts, JSON schemas, a Dockerfile, mounts). Two resolutions of
a task hash alike exactly when they would run the same episode: the same fields (hidden ones too) and
the same bytes in those files. A folder is read in name order; links count by their target, and
FIFOs, sockets and devices by their kind: they are never opened (reading a FIFO blocks, a device may
never end), and seeding a sandbox leaves them out. Past ``CONTENT_LIMIT`` bytes of one task, files
count by size and modification time instead, so a task over a large mount is not read whole each run.
``read_from`` (a named path -> a copy of it, as a run freezes its task files) hashes the names, kinds
and links where the task names them and the bytes of each file from its copy: the hash of what runs,
equal to the task's own while the two agree.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from coder_eval.file_kinds import is_special, kind
from coder_eval.task import TaskSpec

PATH_KEYS = frozenset({"path", "source", "directory", "scripted", "json_schema", "url", "dockerfile_path"})
"""Fields whose absolute value names a file or folder the task reads."""
CONTENT_LIMIT = 256 * 1024 * 1024
_CACHE: dict[int, tuple[TaskSpec, str]] = {}
_CACHE_SIZE = 4096


class Entry(NamedTuple):
    """One thing under a folder the task names: its path (``None`` info: it could not be read)."""

    path: Path
    info: os.stat_result | None


def task_hash(task: TaskSpec, read_from: Mapping[str, str] | None = None) -> str:
    """``sha256:<hex>`` of ``task`` and the files it names (cached per task object, unless the bytes
    are read from copies: ``read_from``)."""
    cached = _CACHE.get(id(task))
    if read_from is None and cached is not None and cached[0] is task:
        return cached[1]
    data = task.model_dump(mode="json")
    digest = hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode())
    value = hash_files(digest, named_paths(data), read_from)
    if read_from is not None:
        return value
    if len(_CACHE) >= _CACHE_SIZE:
        _CACHE.clear()
    _CACHE[id(task)] = (task, value)
    return value


def hash_files(
    digest: Any, roots: list[str], read_from: Mapping[str, str] | None = None, *, base: Path | None = None
) -> str:
    """``sha256:<hex>`` of ``digest`` updated with each root and everything under it, in order (past
    ``CONTENT_LIMIT`` bytes, files count by size and modification time; ``read_from``: each file's
    bytes read from its copy). With ``base``, each path is hashed relative to it, so the same files
    hash alike wherever the folder was checked out."""
    budget = CONTENT_LIMIT
    for root in roots:
        for entry in _walk(Path(root)):
            name = os.path.relpath(entry.path, base) if base is not None else entry.path
            digest.update(b"\0" + os.fsencode(name) + b"\0")
            budget = _hash_entry(entry, digest, budget, read_from)
    return f"sha256:{digest.hexdigest()}"


def named_paths(data: dict[str, Any]) -> list[str]:
    """The files and folders a task's dump (``model_dump(mode="json")``) names, sorted, once each."""
    return sorted(set(_named_paths(data)))


def copy_of(path: Path, read_from: Mapping[str, str] | None) -> Path:
    """Where ``path`` is read from: under the copy of the longest named path holding it, else itself."""
    if not read_from:
        return path
    text = str(path)
    for root in sorted(read_from, key=len, reverse=True):
        if text == root or text.startswith(root.rstrip("/") + "/"):
            return Path(read_from[root] + text[len(root) :])
    return path


def special_files(task: TaskSpec) -> list[str]:
    """What the task's folders hold that is not a file, folder or link: ``/t/app/pipe (a FIFO)``."""
    return [
        f"{entry.path} ({kind(entry.info.st_mode)})"
        for entry in _entries(task.model_dump(mode="json"))
        if entry.info is not None and is_special(entry.info.st_mode)
    ]


def _entries(data: dict[str, Any]) -> Iterator[Entry]:
    for root in named_paths(data):
        yield from _walk(Path(root))


def _named_paths(value: Any, key: str = "") -> Iterator[str]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _named_paths(v, str(k))
    elif isinstance(value, list):
        for item in value:
            yield from _named_paths(item, key)
    elif isinstance(value, str) and key in PATH_KEYS and value.startswith("/") and value != "/":
        yield value


def _walk(root: Path) -> Iterator[Entry]:
    """``root`` and, for a folder, everything under it in name order (links not followed)."""
    try:
        info = root.lstat()
    except OSError:
        yield Entry(root, None)
        return
    yield Entry(root, info)
    if stat.S_ISDIR(info.st_mode):
        try:
            children = sorted(child.name for child in root.iterdir())
        except OSError:
            return
        for name in children:
            yield from _walk(root / name)


def _hash_entry(entry: Entry, digest: Any, budget: int, read_from: Mapping[str, str] | None = None) -> int:
    """Add one entry to ``digest``; the content budget left."""
    info = entry.info
    if info is None:
        digest.update(b"missing")
    elif stat.S_ISLNK(info.st_mode):
        try:
            digest.update(b"link:" + os.fsencode(entry.path.readlink()))
        except OSError:
            digest.update(b"link")
    elif stat.S_ISDIR(info.st_mode):
        digest.update(b"dir")
    elif not stat.S_ISREG(info.st_mode):
        digest.update(f"kind:{stat.S_IFMT(info.st_mode)}".encode())  # never opened
    elif info.st_size > budget:
        digest.update(f"size:{info.st_size}:{info.st_mtime_ns}".encode())
        return 0
    else:
        copy = copy_of(entry.path, read_from)  # what freezing leaves out (__pycache__) is read here
        _hash_content(copy if os.path.lexists(copy) else entry.path, digest)
        return budget - info.st_size
    return budget


def _hash_content(path: Path, digest: Any) -> None:
    """The file's bytes, opened without blocking (a FIFO swapped in since it was listed is never
    read: it counts as unreadable)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        digest.update(b"unreadable")
        return
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            digest.update(b"unreadable")
            return
        with os.fdopen(fd, "rb", closefd=False) as handle:
            while chunk := handle.read(1 << 20):
                digest.update(chunk)
    except OSError:
        digest.update(b"unreadable")
    finally:
        os.close(fd)
