"""Plugins and skills from the host, staged read-only into an agent's sandbox.

Example::

    staged = StagedPlugin(Path("/suite/skills"), "skills", "skills")    # a bare skills root
    stage_plugins(layout.plugins, [staged])
    # <base>/plugins/skills/skills/<name>/SKILL.md   (a bare root gains its skills/ level)
    # <base>/plugins/team/...                        (a plugin folder is copied as it is)

The sandbox's plugins folder sits beside the workspace (so no snapshot holds it and no grader sees
it), and its path inside is ``$CODER_EVAL_PLUGINS``. Every driver makes it read-only: ``bwrap``
binds it read-only, ``docker`` mounts it read-only; ``tempdir`` (no boundary) takes the write bits
off. What is staged is a copy taken when the sandbox is made: the suite's own folder is never where
the agent runs, and ``.git`` folders are left out.
"""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

PLUGINS_VARIABLE = "CODER_EVAL_PLUGINS"
"""The sandbox's plugins folder, as its commands see it (set only when plugins are staged)."""

LEFT_OUT = shutil.ignore_patterns(".git")


@dataclass(frozen=True)
class StagedPlugin:
    """A host folder to stage: its source, its folder name in the sandbox, and its layout (``plugin``:
    copied as it is; ``skills``: a bare skills root, copied under a ``skills/`` level)."""

    source: Path
    name: str
    layout: Literal["plugin", "skills"]

    def inside(self, root: str) -> str:
        """Its staged folder under the sandbox's plugins folder ``root`` (a plugin layout either way)."""
        return f"{root.rstrip('/')}/{self.name}"


def stage_plugins(folder: Path, plugins: Sequence[StagedPlugin]) -> None:
    """Copy each plugin into ``folder`` and take every write bit off (see the module docstring)."""
    if not plugins:
        return
    folder.mkdir(exist_ok=True)
    for plugin in plugins:
        target = folder / plugin.name
        if plugin.layout == "skills":
            target.mkdir(parents=True)
            target = target / "skills"
        shutil.copytree(plugin.source, target, symlinks=True, ignore=LEFT_OUT)
    read_only(folder)


def read_only(folder: Path) -> None:
    """No write bit on ``folder`` or anything below it (links are left as they are)."""
    writable = stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH
    for parent, dirs, files in os.walk(folder, topdown=False):
        for name in [*files, *dirs]:
            path = Path(parent) / name
            if not path.is_symlink():
                path.chmod(path.stat().st_mode & ~writable)
    folder.chmod(folder.stat().st_mode & ~writable)
