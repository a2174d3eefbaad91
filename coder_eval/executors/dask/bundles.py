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
import os
import shutil
import tarfile
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from coder_eval.episode.plan import EpisodePlan
from coder_eval.errors import InputError
from coder_eval.task import TaskSpec

SKIPPED = frozenset({"__pycache__"})
"""Folders that are not the task's: the interpreter writes them, so they would change the hash."""


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


def pack(folder: Path) -> Bundle:
    """The bundle of ``folder`` (see the module docstring)."""
    raw = io.BytesIO()
    with (
        gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, compresslevel=6) as zipped,
        tarfile.open(fileobj=zipped, mode="w", format=tarfile.PAX_FORMAT) as tar,
    ):
        for path in _members(folder):
            _add(tar, folder, path)
    data = raw.getvalue()
    return Bundle(hashlib.sha256(data).hexdigest(), data)


def _members(folder: Path) -> list[Path]:
    found: list[Path] = []
    for top, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED)
        here = Path(top)
        found += [here / d for d in dirs] + [here / f for f in sorted(files)]
    return sorted(found, key=lambda p: p.relative_to(folder).parts)


def _add(tar: tarfile.TarFile, folder: Path, path: Path) -> None:
    info = tarfile.TarInfo(path.relative_to(folder).as_posix())
    if path.is_symlink():
        info.type, info.linkname, info.mode = tarfile.SYMTYPE, str(path.readlink()), 0o777
        tar.addfile(info)
    elif path.is_dir():
        info.type, info.mode = tarfile.DIRTYPE, 0o755
        tar.addfile(info)
    else:
        data = path.read_bytes()
        info.size, info.mode = len(data), 0o755 if os.access(path, os.X_OK) else 0o644
        tar.addfile(info, io.BytesIO(data))


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
    cache.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{sha256[:12]}-", dir=cache))
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
            tar.extractall(staging, filter="data")
        with contextlib.suppress(OSError):  # another episode unpacked it meanwhile: theirs stays
            staging.rename(root)
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise BundleError(f"task bundle {sha256[:12]}: not a bundle ({exc})") from exc
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return root


def relocated(plan: EpisodePlan, root: Path) -> EpisodePlan:
    """``plan`` with every path under its task's folder moved under ``root`` (the unpacked bundle)."""
    old = str(plan.task.source_dir)
    task = _moved(plan.task, old, str(root))
    return replace(plan, task=task)


def _moved(value: Any, old: str, new: str) -> Any:
    """``value`` with each path-like string under ``old`` (it, or ``old/...``) moved under ``new``."""
    if isinstance(value, BaseModel):
        update = {name: _moved(getattr(value, name), old, new) for name in type(value).model_fields}
        changed = {k: v for k, v in update.items() if v is not getattr(value, k)}
        return value.model_copy(update=changed) if changed else value
    if isinstance(value, Path):
        text = str(value)
        moved = _moved(text, old, new)
        return Path(moved) if moved != text else value
    if isinstance(value, str):
        if value == old or value.startswith(old + "/"):
            return new + value[len(old) :]
        return value
    if isinstance(value, list | tuple):
        items = [_moved(v, old, new) for v in value]
        return type(value)(items) if any(a is not b for a, b in zip(items, value, strict=True)) else value
    if isinstance(value, dict):
        moved = {k: _moved(v, old, new) for k, v in value.items()}
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
