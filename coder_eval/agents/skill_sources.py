"""Plugins and skills as a suite names them: folders on the host, resolved once at load time.

Example::

    resolve_plugin_path("$TEAM_SKILLS", base=Path("suite/tasks"), sources=[])   # "/home/me/skills"
    resolve_plugin_path("../skills", base=Path("suite/tasks"), sources=[])      # "/…/suite/skills"
    contents = plugin_contents(Path("/…/suite/skills"))
    contents.layout      # "skills": a bare skills root (<name>/SKILL.md), no skills/ level
    contents.skills      # {"release-notes": SkillFolder("release-notes", "release-notes", "9c1f…")}

A plugin path is, in order: absolute (after ``$VAR`` / ``${VAR}`` expansion); a folder relative to
the file that names it (the task file, or the experiment file for an experiment's layers); a folder
a ``template_dir`` source copies into the workspace (coder_eval's earlier spelling, where the
plugin went through the workspace: the template's own folder is used); a folder relative to the
working directory (the original coder_eval's reading, for a suite run from its root: said once, as a
:class:`PluginPathWarning`); else a workspace path that starter files, a repository or ``pre_run``
make. Anything else is an error naming the file the path came from and every place looked in.
Host folders are staged into every sandbox read-only (``coder_eval.sandbox.staged_plugins``).

A folder is a *plugin* when it has ``.claude-plugin/plugin.json`` or a ``skills/`` folder; its
skills are ``skills/<name>/SKILL.md`` (or the folders its manifest's ``skills`` field names). A
folder of ``<name>/SKILL.md`` with neither is a *bare skills root*. A skill's name is its
``SKILL.md`` front matter ``name``, else its folder's name.
"""

from __future__ import annotations

import hashlib
import json
import re
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Literal

from coder_eval.agents.spec import VARIABLE, AgentSpecBase, LocalPlugin, expand_variables
from coder_eval.sandbox.base import check_sandbox_path
from coder_eval.sandbox.spec import RepoSource, StarterFiles, TemplateSource
from coder_eval.sandbox.template_files import template_folder

MANIFEST = PurePosixPath(".claude-plugin/plugin.json")
SKILL_FILE = "SKILL.md"
FRONT_NAME = re.compile(r"^name:\s*(.+?)\s*$", re.MULTILINE)

Layout = Literal["plugin", "skills"]


@dataclass(frozen=True)
class SkillFolder:
    """One skill: its name, its folder relative to the plugin root, and a digest of its files."""

    name: str
    folder: str
    digest: str


@dataclass(frozen=True)
class PluginContents:
    """What a plugin folder on the host holds (see the module docstring)."""

    source: Path
    name: str
    layout: Layout
    skill_dirs: tuple[str, ...]
    """Folders (relative to the plugin root) whose ``<name>/SKILL.md`` are its skills."""
    skills: dict[str, SkillFolder] = field(default_factory=dict)

    @property
    def fingerprint(self) -> frozenset[tuple[str, str]]:
        """(skill name, digest) of every skill: two plugins offer the same skills when these agree."""
        return frozenset((s.name, s.digest) for s in self.skills.values())


class PluginPathWarning(UserWarning):
    """A relative plugin path found from the working directory, not next to the file that names it.

    Example: ``experiments/ab.yaml:17: variants[1].agent.plugins[0]: 'skill-data' is not next to
    experiments/ab.yaml (no folder /suite/experiments/skill-data); using /suite/skill-data, found from
    the working directory``.
    """


@dataclass(frozen=True)
class PluginOrigin:
    """The file a plugin path was written in, the line and the field (an error or a note names them).

    Example: ``PluginOrigin(Path("experiments/ab.yaml"), "experiments/ab.yaml:17",
    "variants[1].agent.plugins[0]")``: a relative path in it is looked for next to that file first.
    """

    file: Path
    where: str
    field: str


def resolve_plugin_path(
    path: str,
    base: Path,
    sources: Sequence[TemplateSource],
    workspace_made: bool = False,
    origin: PluginOrigin | None = None,
) -> str:
    """``path`` as the folder it names: an absolute host path, else a workspace path (see the module
    docstring). ``base``: the folder of ``origin``, the file that names it. ``workspace_made``:
    starter files, a repository or ``pre_run`` may make folders the template sources do not show.
    ``ValueError`` saying what was looked for, and where."""
    unset = VARIABLE.search(path)
    if unset is not None:
        name = unset.group(1) or unset.group(2)
        raise ValueError(f"{path!r}: the environment variable {name} is not set")
    given = Path(path).expanduser()
    if given.is_absolute():
        if not given.is_dir():
            raise ValueError(f"{path!r}: no such folder")
        return str(given.resolve())
    host = (base / given).resolve()
    if host.is_dir():
        return str(host)
    copied = template_folder(path, sources)
    if copied is not None:
        return str(copied)
    here = (Path.cwd() / given).resolve()
    named = str(origin.file) if origin is not None else "the file that names it"
    if here.is_dir():
        where = f"{origin.where}: {origin.field}: " if origin is not None else ""
        warnings.warn(
            f"{where}{path!r} is not next to {named} (no folder {host}); using {here}, found from the "
            "working directory",
            PluginPathWarning,
            stacklevel=2,
        )
        return str(here)
    if workspace_made:
        check_sandbox_path(path)
        return path
    raise ValueError(
        f"{path!r} is neither next to {named} (no folder {host}) nor in the working directory (no "
        f"folder {here}), and no template source puts it in the workspace"
    )


def workspace_made(sources: Sequence[TemplateSource], pre_run: bool) -> bool:
    """Whether something other than template folders may make a workspace folder before the agent."""
    return pre_run or any(isinstance(s, RepoSource | StarterFiles) for s in sources)


def is_host_plugin(path: str) -> bool:
    """A resolved plugin path names a host folder (else a workspace folder)."""
    return PurePosixPath(path).is_absolute()


def plugin_contents(folder: Path) -> PluginContents:
    """What the plugin or skills root at ``folder`` holds (a folder without skills holds none)."""
    folder = folder.resolve()
    manifest = _manifest(folder)
    plugin = manifest is not None or (folder / "skills").is_dir()
    if plugin:
        declared = _declared_dirs(manifest) or ["skills"]
        dirs = tuple(d for d in declared if (folder / d).is_dir())
    else:
        dirs = (".",)
    skills: dict[str, SkillFolder] = {}
    for relative in dirs:
        for skill_file in sorted((folder / relative).glob(f"*/{SKILL_FILE}")):
            skill = _skill(skill_file.parent, folder)
            skills.setdefault(skill.name, skill)
    name = str((manifest or {}).get("name") or folder.name)
    return PluginContents(folder, name, "plugin" if plugin else "skills", dirs, skills)


def _manifest(folder: Path) -> dict[str, object] | None:
    path = folder / MANIFEST
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return {}
    return data if isinstance(data, dict) else {}


def _declared_dirs(manifest: dict[str, object] | None) -> list[str]:
    value = (manifest or {}).get("skills")
    found = [value] if isinstance(value, str) else value if isinstance(value, list) else []
    return [str(PurePosixPath(d)) for d in found if isinstance(d, str) and ".." not in PurePosixPath(d).parts]


def skill_name(text: str, folder_name: str) -> str:
    """A skill's name: its ``SKILL.md`` front matter ``name``, else its folder's name."""
    front = text.split("\n---", 1)[0] if text.startswith("---") else ""
    match = FRONT_NAME.search(front)
    return match.group(1).strip("'\"") if match else folder_name


def _skill(folder: Path, root: Path) -> SkillFolder:
    text = (folder / SKILL_FILE).read_text(encoding="utf-8", errors="replace")
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        digest.update(path.relative_to(folder).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    name = skill_name(text, folder.name)
    return SkillFolder(name, folder.relative_to(root).as_posix(), digest.hexdigest()[:16])


def with_resolved_plugins(
    spec: AgentSpecBase,
    origin_of: Callable[[int], PluginOrigin],
    sources: Sequence[TemplateSource],
    pre_run: bool,
) -> tuple[AgentSpecBase, list[str]]:
    """``spec`` with every plugin path resolved (:func:`resolve_plugin_path`) from the file
    ``origin_of(index)`` says it was written in, and the problems, each naming that file and line."""
    plugins: list[LocalPlugin] = list(getattr(spec, "plugins", None) or [])
    if not plugins:
        return spec, []
    made = workspace_made(sources, pre_run)
    resolved, problems = [], []
    for i, plugin in enumerate(plugins):
        origin = origin_of(i)
        try:
            path = resolve_plugin_path(plugin.path, origin.file.resolve().parent, sources, made, origin)
        except ValueError as exc:
            problems.append(f"{origin.where}: {origin.field}: {exc}")
            path = plugin.path
        resolved.append(plugin.model_copy(update={"path": path}))
    return spec.model_copy(update={"plugins": resolved}), problems


def relative_to_file(path: str, base: Path) -> str:
    """An experiment layer's plugin path: absolute when it names a folder relative to the experiment
    file (``base``); else as written, for the task loader to resolve (``$VAR`` expanded either way)."""
    expanded = expand_variables(path)
    given = Path(expanded).expanduser()
    if not given.is_absolute() and (base / given).is_dir():
        return str((base / given).resolve())
    return expanded
