"""What an episode offers its agent: plugins staged from the host, and plugins in its workspace.

Example::

    staging = plugin_staging(task.agent)                     # host folders -> StagedPlugin + contents
    provision = Provision(..., plugins=tuple(s.staged for s in staging))
    sandbox = await make_sandbox(spec, provision)
    offered = await offered_plugins(task.agent, sandbox, staging)
    [(p.name, [name for name, _ in p.skills]) for p in offered]   # [("team-skills", ["pdf", "docx"])]

Host folders (``coder_eval.agents.skill_sources``) are staged read-only beside the workspace
(``coder_eval.sandbox.staged_plugins``); a workspace folder (starter files, a repository, ``pre_run``) is
read where it is once ``pre_run`` has run, and a bare skills root there gets a plugin folder of its
own in the agent's HOME (``~/.coder_eval/plugins/<name>/skills/``), which Claude Code needs.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from coder_eval.agents.base import OfferedPlugin
from coder_eval.agents.cli_spec import copy_skills
from coder_eval.agents.skill_sources import PluginContents, is_host_plugin, plugin_contents, skill_name
from coder_eval.agents.spec import AgentSpecBase, plugin_paths
from coder_eval.errors import AgentError, WorkspaceFileError
from coder_eval.sandbox.base import Sandbox
from coder_eval.sandbox.staged_plugins import PLUGINS_VARIABLE, StagedPlugin


@dataclass(frozen=True)
class Staging:
    """One host plugin: how it is staged, and what it holds."""

    staged: StagedPlugin
    contents: PluginContents


def plugin_staging(spec: AgentSpecBase) -> list[Staging]:
    """The host plugins of ``spec``, each with a folder name of its own in the sandbox."""
    taken: set[str] = set()
    staging = []
    for path in plugin_paths(spec):
        if is_host_plugin(path):
            contents = plugin_contents(Path(path))
            name = _unique(contents.name, taken)
            staging.append(Staging(StagedPlugin(contents.source, name, contents.layout), contents))
    return staging


def _unique(name: str, taken: set[str]) -> str:
    base = "".join(c if c.isalnum() or c in "._-" else "-" for c in name).strip("-.") or "plugin"
    chosen, n = base, 1
    while chosen in taken:
        n += 1
        chosen = f"{base}-{n}"
    taken.add(chosen)
    return chosen


async def offered_plugins(
    spec: AgentSpecBase, sandbox: Sandbox, staging: list[Staging]
) -> list[OfferedPlugin]:
    """Every plugin of ``spec`` as the agent will find it in ``sandbox`` (see the module docstring)."""
    offered = [_staged(s, sandbox.env.get(PLUGINS_VARIABLE, "")) for s in staging]
    for path in plugin_paths(spec):
        if not is_host_plugin(path):
            offered.append(await _in_workspace(path, sandbox))
    return offered


def _staged(staging: Staging, root: str) -> OfferedPlugin:
    contents, staged = staging.contents, staging.staged
    path = staged.inside(root)
    prefix = f"{path}/skills" if contents.layout == "skills" else path
    dirs = tuple(str(PurePosixPath(prefix) / d) for d in contents.skill_dirs)
    skills = tuple((s.name, str(PurePosixPath(prefix) / s.folder)) for s in contents.skills.values())
    return OfferedPlugin(staged.name, path, dirs, skills, str(contents.source))


async def _in_workspace(path: str, sandbox: Sandbox) -> OfferedPlugin:
    """A workspace plugin, read where it is; a bare skills root gets a plugin folder in HOME."""
    if not await sandbox.glob(f"{path}/**", include_links=True):
        raise AgentError(f"agent.plugins: {path!r} is not a folder with files in the sandbox")
    name = PurePosixPath(path).name
    workdir = sandbox.workdir.rstrip("/")
    files = await sandbox.glob(f"{path}/skills/*/SKILL.md")
    if files:
        root = f"{workdir}/{path}"
        return OfferedPlugin(name, root, (f"{root}/skills",), await _named(sandbox, files, workdir), path)
    files = await sandbox.glob(f"{path}/*/SKILL.md")
    home = f"{sandbox.env['HOME']}/.coder_eval/plugins/{name}"
    folders = [str(PurePosixPath(f).parent) for f in files]
    await copy_skills(sandbox, folders, f"{home}/skills")
    named = await _named(sandbox, files, workdir)
    skills = tuple((skill, f"{home}/skills/{PurePosixPath(folder).name}") for skill, folder in named)
    return OfferedPlugin(name, home, (f"{home}/skills",), skills, path)


async def _named(sandbox: Sandbox, files: list[str], workdir: str) -> tuple[tuple[str, str], ...]:
    """(name, absolute folder) of each ``SKILL.md`` in ``files`` (workspace paths)."""
    named = []
    for file in files:
        folder = PurePosixPath(file).parent
        try:
            text = (await sandbox.read_file(file)).decode("utf-8", errors="replace")
        except WorkspaceFileError:
            continue
        named.append((skill_name(text, folder.name), f"{workdir}/{folder}"))
    return tuple(named)
