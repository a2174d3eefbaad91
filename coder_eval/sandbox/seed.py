"""Seeding a sandbox: template directories, starter files, mock PATH directories.

Example::

    for source in spec.template_sources:
        apply_template(source, root)
    mock_dirs = prepare_mock_dirs(spec.mock_path_dirs, root)  # absolute, every file chmod +x

Source paths (``template_dir``, ``StarterFile.source``) are absolute: the task loader resolved them.
"""

from __future__ import annotations

import shutil
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from coder_eval.errors import SandboxError
from coder_eval.sandbox.base import inside

if TYPE_CHECKING:
    from coder_eval.task import StarterFile, TemplateSource


def apply_template(source: TemplateSource, root: Path) -> None:
    """Copy ``template_dir`` into ``target`` (only the listed plain paths, when there are any),
    then write each ``StarterFile`` at its path relative to ``root``.

    Example: ``TemplateSource(template_dir="/t/app", starter_files=["src", "README.md"])`` copies
    ``/t/app/src`` and ``/t/app/README.md`` to ``<root>/src`` and ``<root>/README.md``.
    """
    target = inside(root, source.target)
    picked = [entry for entry in source.starter_files if isinstance(entry, str)]
    if source.template_dir is not None:
        template = Path(source.template_dir)
        for relative in picked or ["."]:
            _copy(inside(template, relative), inside(target, relative))
    elif picked:
        raise SandboxError(
            f"sandbox.template_sources: starter_files {picked} are paths inside template_dir, "
            "but this source has no template_dir; add one, or give each file 'content' or 'source'"
        )
    for entry in source.starter_files:
        if not isinstance(entry, str):
            write_starter(entry, root)


def write_starter(starter: StarterFile, root: Path) -> None:
    """Write one starter file (inline ``content`` or a copy of ``source``), chmod +x if asked."""
    path = inside(root, starter.path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if starter.content is not None:
        path.write_text(starter.content, encoding="utf-8")
    elif starter.source is not None:
        shutil.copyfile(starter.source, path)
    if starter.executable:
        make_executable(path)


def prepare_mock_dirs(relative_dirs: Iterable[str], root: Path) -> list[Path]:
    """Absolute paths of the mock PATH directories, with every file in them made executable."""
    dirs = []
    for relative in relative_dirs:
        directory = inside(root, relative)
        if not directory.is_dir():
            raise SandboxError(
                f"sandbox.mock_path_dirs: {relative!r} is not a directory in the sandbox after "
                "template_sources were applied; add it to a template or fix the path"
            )
        for path in directory.rglob("*"):
            if path.is_file():
                make_executable(path)
        dirs.append(directory)
    return dirs


def make_executable(path: Path) -> None:
    """``chmod +x`` (user, group and other)."""
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


def _copy(source: Path, destination: Path) -> None:
    if source.is_dir():
        shutil.copytree(source, destination, symlinks=True, dirs_exist_ok=True)
        return
    if not source.exists():
        raise SandboxError(f"sandbox.template_sources: {source} not found in the template directory")
    destination.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(source, destination, follow_symlinks=False)
