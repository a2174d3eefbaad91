"""Where a run's suite came from: the git commit and branch of the folder its tasks live in, and
each task's content hash.

A task's **content hash** is the sha256 of its task file's bytes and of every file or folder that
file names by a path relative to itself (fixtures, hidden tests, scripts, a dataset's rows). It
leaves out what an experiment adds (a variant's skill, model or plugin), so a run with a changed
skill still pairs with its baseline, while a task whose own files changed does not. Paths are
hashed relative to the task's folder, so two checkouts of the same suite in different places (a CI
runner's and a laptop's) hash alike.

The branch is what ``--baseline latest-on-<branch>`` selects by. A CI checkout is usually a detached
HEAD, so the branch is read from ``CODER_EVAL_BRANCH``, else GitHub Actions' ``GITHUB_HEAD_REF`` (a
pull request's branch) or ``GITHUB_REF_NAME``, else ``git rev-parse --abbrev-ref HEAD``.

Example::

    task_content_hashes(resolution)   # {'hello': 'sha256:...'}
    source_of([Path("tasks/demo")])   # SourceRecord(git_commit='3f2c...', git_branch='main', git_dirty=False)
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from coder_eval.manifest import SourceRecord
from coder_eval.task.files import copy_of, hash_files

if TYPE_CHECKING:
    from coder_eval.experiment import Resolution

BRANCH_VARIABLES = ("CODER_EVAL_BRANCH", "GITHUB_HEAD_REF", "GITHUB_REF_NAME")
GIT_TIMEOUT_S = 10


def git(folder: Path, *args: str) -> str | None:
    """``git -C folder args`` stripped, or None when git, the repository or the answer is missing."""
    try:
        done = subprocess.run(
            ["git", "-C", str(folder), *args], capture_output=True, text=True, timeout=GIT_TIMEOUT_S
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def branch_from_environment() -> str | None:
    """The branch CI names (the first of ``BRANCH_VARIABLES`` set and not empty)."""
    return next((os.environ[v] for v in BRANCH_VARIABLES if os.environ.get(v)), None)


def source_of(paths: Sequence[Path]) -> SourceRecord | None:
    """The git provenance of the first existing path (its folder when it is a file); outside a git
    work tree, only the branch CI names (None when it names none)."""
    existing = [p for p in paths if p.exists()]
    named = branch_from_environment()
    folder = (existing[0] if existing[0].is_dir() else existing[0].parent) if existing else None
    commit = git(folder, "rev-parse", "HEAD") if folder else None
    if commit is None or folder is None:
        return SourceRecord(git_branch=named) if named else None
    head = git(folder, "rev-parse", "--abbrev-ref", "HEAD")
    branch = named or (head if head and head != "HEAD" else None)
    status = git(folder, "status", "--porcelain", "--untracked-files=no", "--", ".")
    return SourceRecord(git_commit=commit, git_branch=branch, git_dirty=bool(status))


def task_content_hashes(resolution: Resolution, read_from: Mapping[str, str] | None = None) -> dict[str, str]:
    """Each task id of the run -> its content hash (the module docstring says what it covers;
    ``read_from``: files read from their frozen copies, ``task_files.hash_files``)."""
    hashes: dict[str, str] = {}
    for source in resolution.sources:
        try:
            value = file_content_hash(source.path, read_from)
        except OSError:
            continue
        hashes.update({task.task_id: value for task in source.tasks})
    return hashes


def file_content_hash(path: Path, read_from: Mapping[str, str] | None = None) -> str:
    """sha256 of a task file's bytes and of what it names relative to its folder; a task that is a
    folder (a Harbor task directory) is the folder's content."""
    if path.is_dir():
        return hash_files(hashlib.sha256(b"folder"), [str(path.resolve())], read_from, base=path.resolve())
    data = copy_of(path.resolve(), read_from).read_bytes()
    try:
        raw = yaml.safe_load(data) if path.suffix in (".yaml", ".yml") else None
    except yaml.YAMLError:
        raw = None
    folder = path.parent.resolve()
    named = {str((folder / value).resolve()) for value in strings(raw) if names_a_path(folder, value)}
    ordered = sorted(named, key=lambda name: os.path.relpath(name, folder))
    return hash_files(hashlib.sha256(data), ordered, read_from, base=folder)


def strings(value: Any) -> Iterator[str]:
    """Every string in a parsed YAML document."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


def names_a_path(folder: Path, value: str) -> bool:
    """``value`` is a relative path (one line, not ``.``) to something that exists under ``folder``'s
    parent tree."""
    if not value or "\n" in value or value.startswith("/") or value.strip(". /") == "" or len(value) > 1024:
        return False
    try:
        return (folder / value).exists()
    except (OSError, ValueError):
        return False
