"""A workspace path's pristine origin in the task's template sources: what the sandbox holds there
before the agent runs, read from the suite (never from a sandbox the agent could have changed).

Example::

    template_file("schemas/report.json", task.sandbox.template_sources)
    # Pristine(path=Path("/suite/fixtures/app/schemas/report.json"), content=None)
    template_file("config.json", [StarterFiles(files=[StarterFile(path="config.json", content="{}")])])
    # Pristine(path=None, content="{}")
    template_folder(".plugins/site-tools", sources)    # Path("/suite/plugins/site-tools")

The sources are read as the sandbox applies them, so the last one that writes the path wins:
template folders (all of them, or the paths listed in ``files``), inline and copied starter files,
and a repository cloned from a local path (read with ``git show``). A file only a remote repository
holds cannot be read before the sandbox exists: ``ValueError`` says so.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from pathlib import Path, PurePosixPath
from typing import NamedTuple

from coder_eval.sandbox.spec import RepoSource, StarterFile, StarterFiles, TemplateDir, TemplateSource

GIT_TIMEOUT_S = 30


class Pristine(NamedTuple):
    """Where a workspace file comes from: a host file, or inline content."""

    path: Path | None
    content: str | None


def _normal(path: str) -> PurePosixPath:
    return PurePosixPath(os.path.normpath(path))


def _inner(wanted: PurePosixPath, mount_point: str) -> PurePosixPath | None:
    """``wanted`` relative to ``mount_point`` (None when it is not below it)."""
    mount = _normal(mount_point)
    if str(mount) == ".":
        return wanted
    return wanted.relative_to(mount) if wanted.is_relative_to(mount) else None


def template_file(path: str, sources: Sequence[TemplateSource]) -> Pristine | None:
    """The origin of workspace file ``path`` (see the module docstring), or None."""
    wanted = _normal(path)
    for source in reversed(sources):
        inner = _inner(wanted, source.mount_point)
        if inner is None:
            continue
        found = (
            _repo_file(source, inner, wanted) if isinstance(source, RepoSource) else _file_from(source, inner)
        )
        if found is not None:
            return found
    return None


def _file_from(source: TemplateDir | StarterFiles, inner: PurePosixPath) -> Pristine | None:
    for starter in reversed(source.files):
        if isinstance(starter, StarterFile) and _normal(starter.path) == inner:
            return Pristine(Path(starter.source) if starter.source else None, starter.content)
    if not isinstance(source, TemplateDir):
        return None
    picked = [_normal(p) for p in source.files if isinstance(p, str)]
    if picked and not any(inner == p or inner.is_relative_to(p) for p in picked):
        return None
    candidate = Path(source.path) / inner
    return Pristine(candidate, None) if candidate.is_file() else None


def _repo_file(source: RepoSource, inner: PurePosixPath, wanted: PurePosixPath) -> Pristine | None:
    if "://" in source.url or source.url.startswith("git@") or not Path(source.url).is_dir():
        raise ValueError(
            f"{wanted} would come from the repository {source.url}, which is cloned only when the sandbox "
            "is made: put the file in the task folder, or give it inline"
        )
    command = ["git", "-C", source.url, "show", f"{source.commit or 'HEAD'}:{inner}"]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=GIT_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return Pristine(None, done.stdout) if done.returncode == 0 else None


def template_folder(path: str, sources: Sequence[TemplateSource]) -> Path | None:
    """The host folder a whole-folder ``template_dir`` source copies to workspace path ``path``."""
    wanted = _normal(path)
    for source in reversed(sources):
        if not isinstance(source, TemplateDir) or source.files:
            continue
        inner = _inner(wanted, source.mount_point)
        candidate = Path(source.path) / inner if inner is not None else None
        if candidate is not None and candidate.is_dir():
            return candidate.resolve()
    return None
