"""Wheels of installed distributions, so a test can fill a fresh virtualenv offline.

``wheelhouse(["pandas>=2"], folder)`` writes a wheel for every installed distribution the
requirements need (recursively, extras and markers honoured), repacked from the files pip
installed: site-packages files as they are, files installed under the prefix (``share/jupyter/...``)
as wheel data, console scripts left to the installer (it writes them from ``entry_points.txt``).
"""

from __future__ import annotations

import base64
import hashlib
import sys
import zipfile
from collections.abc import Iterable
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

SKIPPED = {"RECORD", "INSTALLER", "REQUESTED", "direct_url.json"}


def closure(requirements: Iterable[str]) -> list[metadata.Distribution]:
    """Every installed distribution ``requirements`` need, following extras and markers."""
    found: dict[str, metadata.Distribution] = {}
    pending = [Requirement(r) for r in requirements]
    seen: set[tuple[str, frozenset[str]]] = set()
    while pending:
        requirement = pending.pop()
        key = (canonicalize_name(requirement.name), frozenset(requirement.extras))
        if key in seen:
            continue
        seen.add(key)
        dist = metadata.distribution(requirement.name)
        found[key[0]] = dist
        for text in dist.requires or []:
            child = Requirement(text)
            extras = requirement.extras or {""}
            if child.marker is None or any(child.marker.evaluate({"extra": e}) for e in extras):
                pending.append(child)
    return sorted(found.values(), key=lambda d: canonicalize_name(d.metadata["Name"]))


def repack(dist: metadata.Distribution, folder: Path) -> Path:
    """``dist`` as a wheel in ``folder`` (kept when a wheel of the same name is already there)."""
    info = next(Path(str(f)) for f in dist.files or [] if Path(str(f)).name == "METADATA").parent
    tag = _tag_set(dist.read_text("WHEEL") or "")
    target = folder / f"{info.name.removesuffix('.dist-info')}-{tag}.whl"
    if target.exists():
        return target
    data = f"{info.name.removesuffix('.dist-info')}.data/data/"
    site = Path(str(dist.locate_file(""))).resolve()
    prefix = Path(sys.prefix).resolve()
    records: list[str] = []
    partial = target.with_suffix(".partial")
    with zipfile.ZipFile(partial, "w", zipfile.ZIP_STORED) as wheel:
        for file in dist.files or []:
            source = Path(str(dist.locate_file(file))).resolve()
            name = _archive_name(source, site, prefix, data, info.name)
            if name is None or not source.is_file():
                continue
            content = source.read_bytes()
            wheel.writestr(name, content)
            digest = base64.urlsafe_b64encode(hashlib.sha256(content).digest()).rstrip(b"=").decode()
            records.append(f"{name},sha256={digest},{len(content)}")
        records.append(f"{info.name}/RECORD,,")
        wheel.writestr(f"{info.name}/RECORD", "\n".join(records) + "\n")
    partial.replace(target)
    return target


def _archive_name(source: Path, site: Path, prefix: Path, data: str, info: str) -> str | None:
    if "__pycache__" in source.parts:
        return None
    if source.is_relative_to(site):
        relative = source.relative_to(site).as_posix()
        return None if relative.startswith(f"{info}/") and source.name in SKIPPED else relative
    if source.is_relative_to(prefix) and source.relative_to(prefix).parts[0] != "bin":
        return data + source.relative_to(prefix).as_posix()
    return None


def _tag_set(wheel_file: str) -> str:
    """The WHEEL file's tags as a file name's compressed tag set (``py2.py3-none-any``)."""
    tags = [
        line.split(":", 1)[1].strip().split("-")
        for line in wheel_file.splitlines()
        if line.startswith("Tag:")
    ]
    if not tags:
        return "py3-none-any"
    return "-".join(".".join(sorted(dict.fromkeys(t[i] for t in tags))) for i in range(3))


def wheelhouse(requirements: Iterable[str], folder: Path) -> list[Path]:
    """Wheels in ``folder`` for everything ``requirements`` need; returns their paths."""
    folder.mkdir(parents=True, exist_ok=True)
    return [repack(dist, folder) for dist in closure(requirements)]
