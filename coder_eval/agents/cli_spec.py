"""Helpers the CLI agents share: the request's own spec, plugins' skills, turns and the model to run.

Example::

    spec = own_spec(request, CodexSpec)        # the episode's agent block, typed for this kind
    await plugin_skills(request.sandbox, spec.plugins)
    max_turns(spec, request.limits), model_name(request, spec, "gpt-5.1-codex")

The spec classes themselves live beside each agent (``codex/spec.py`` ...), on ``CliAgentSpec``
(``coder_eval.agents.spec``).
"""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import TYPE_CHECKING, TypeVar

from coder_eval.agents.spec import AgentSpecBase, CliAgentSpec, LocalPlugin
from coder_eval.errors import AgentError

if TYPE_CHECKING:
    from coder_eval.agents.base import AgentRequest
    from coder_eval.limits import RunLimits
    from coder_eval.sandbox.base import Sandbox

__all__ = [
    "CliAgentSpec",
    "LocalPlugin",
    "copy_skills",
    "max_turns",
    "model_name",
    "own_spec",
    "plugin_skills",
]

Spec = TypeVar("Spec", bound=AgentSpecBase)


def own_spec(request: AgentRequest, kind: type[Spec]) -> Spec:
    """The request's spec as ``kind``; ``AgentError`` when it is another kind's (a wiring fault)."""
    if not isinstance(request.spec, kind):
        raise AgentError(f"{kind.__name__} expected, got the {request.spec.type!r} agent's spec")
    return request.spec


async def plugin_skills(sandbox: Sandbox, plugins: list[LocalPlugin]) -> list[str]:
    """The skill folders (``skills/<name>/`` holding a ``SKILL.md``) of ``plugins``, workspace-relative.

    Example: ``await plugin_skills(sandbox, [LocalPlugin(path=".plugins/site-tools")])``
    -> ``[".plugins/site-tools/skills/sitectl"]``.
    """
    found: list[str] = []
    for plugin in plugins:
        if not await sandbox.glob(f"{plugin.path}/**", include_links=True):
            raise AgentError(f"agent.plugins: {plugin.path!r} is not a folder with files in the sandbox")
        skills = await sandbox.glob(f"{plugin.path}/skills/*/SKILL.md")
        found += sorted(str(PurePosixPath(path).parent) for path in skills)
    return found


async def copy_skills(sandbox: Sandbox, skills: list[str], target: str) -> None:
    """Copy each skill folder into ``target/<name>/`` (an absolute path in the sandbox, e.g. the
    agent's config folder in HOME) through the sandbox's verbs; a file starting with ``#!`` stays
    executable."""
    for skill in skills:
        name = PurePosixPath(skill).name
        for path in await sandbox.glob(f"{skill}/**"):
            data = await sandbox.read_file(path)
            relative = PurePosixPath(path).relative_to(skill)
            await sandbox.write_file(f"{target}/{name}/{relative}", data, executable=data.startswith(b"#!"))


def max_turns(spec: CliAgentSpec, limits: RunLimits) -> int | None:
    """The tighter of the agent's and the run's ``max_turns``. Example: (10, 4) -> 4."""
    given = [n for n in (spec.max_turns, limits.max_turns) if n is not None]
    return min(given) if given else None


def model_name(request: AgentRequest, spec: CliAgentSpec, scripted_default: str) -> str | None:
    """The model to run: the script's model (else ``scripted_default``) when the scripted server
    plays the model, else ``spec.model`` (None lets the CLI pick its own default).

    Example: a scripted task whose script says ``model: gpt-5.1-codex`` -> ``"gpt-5.1-codex"``.
    """
    if request.endpoint is None:
        return spec.model
    return request.endpoint.model or scripted_default
