"""A resolved task's content hash: everything it says (hidden fields too) and the files it reads.

Example::

    task_hash(task)    # 'sha256:3f2a…': recorded in each episode_start, compared by --resume

Two resolutions of a task hash alike exactly when they would run the same episode: the same fields
(prompt, criteria, agent, sandbox, limits, the reference solution and hidden tests' paths), and the
same bytes in the files and folders those fields name (template folders, starter files, hidden
tests, the reference folder, scripted model scripts, JSON schemas, a Dockerfile, mounts). A folder is
read in name order; links count by their target, other non-regular files by their kind. Past
``CONTENT_LIMIT`` bytes of one task, files count by size and modification time instead of content,
so a task over a large dataset mount is not read whole at every run.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from coder_eval.task import TaskSpec

PATH_KEYS = frozenset({"path", "source", "directory", "scripted", "json_schema", "url", "dockerfile_path"})
"""Fields whose absolute value names a file or folder the task reads."""
CONTENT_LIMIT = 256 * 1024 * 1024
_CACHE: dict[int, tuple[TaskSpec, str]] = {}
_CACHE_SIZE = 4096


def task_hash(task: TaskSpec) -> str:
    """``sha256:<hex>`` of ``task`` and the files it names (cached per task object)."""
    cached = _CACHE.get(id(task))
    if cached is not None and cached[0] is task:
        return cached[1]
    data = task.model_dump(mode="json")
    digest = hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode())
    budget = [CONTENT_LIMIT]
    for path in sorted(set(_named_paths(data))):
        digest.update(f"\0{path}\0".encode())
        _hash_tree(Path(path), digest, budget)
    value = f"sha256:{digest.hexdigest()}"
    if len(_CACHE) >= _CACHE_SIZE:
        _CACHE.clear()
    _CACHE[id(task)] = (task, value)
    return value


def _named_paths(value: Any, key: str = "") -> Iterator[str]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _named_paths(v, str(k))
    elif isinstance(value, list):
        for item in value:
            yield from _named_paths(item, key)
    elif isinstance(value, str) and key in PATH_KEYS and value.startswith("/") and value != "/":
        yield value


def _hash_tree(root: Path, digest: Any, budget: list[int]) -> None:
    """Add ``root`` (a file or a folder, walked in name order, links not followed) to ``digest``."""
    try:
        info = root.lstat()
    except OSError:
        digest.update(b"missing")
        return
    if stat.S_ISDIR(info.st_mode):
        try:
            children = sorted(child.name for child in root.iterdir())
        except OSError:
            digest.update(b"unreadable")
            return
        for name in children:
            digest.update(f"\0{name}/".encode(errors="surrogateescape"))
            _hash_tree(root / name, digest, budget)
    elif stat.S_ISLNK(info.st_mode):
        digest.update(b"link:" + os.fsencode(root.readlink()))
    elif stat.S_ISREG(info.st_mode):
        _hash_file(root, info, digest, budget)
    else:
        digest.update(f"kind:{stat.S_IFMT(info.st_mode)}".encode())  # a FIFO is never opened


def _hash_file(path: Path, info: os.stat_result, digest: Any, budget: list[int]) -> None:
    if info.st_size > budget[0]:
        budget[0] = 0
        digest.update(f"size:{info.st_size}:{info.st_mtime_ns}".encode())
        return
    budget[0] -= info.st_size
    try:
        with path.open("rb") as handle:
            while chunk := handle.read(1 << 20):
                digest.update(chunk)
    except OSError:
        digest.update(b"unreadable")
