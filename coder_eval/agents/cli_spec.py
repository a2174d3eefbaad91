"""Helpers the CLI agents share: the request's own spec, its offered skills, turns and the model to run.

Example::

    spec = own_spec(request, CodexSpec)        # the episode's agent block, typed for this kind
    offered_skill_folders(request)             # the skills staged for it (request.plugins)
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
    from coder_eval.sandbox.base import Sandbox
    from coder_eval.task.limits import RunLimits

__all__ = [
    "CliAgentSpec",
    "LocalPlugin",
    "copy_skills",
    "link_skills",
    "max_turns",
    "model_name",
    "offered_skill_folders",
    "own_spec",
]

Spec = TypeVar("Spec", bound=AgentSpecBase)


def own_spec(request: AgentRequest, kind: type[Spec]) -> Spec:
    """The request's spec as ``kind``; ``AgentError`` when it is another kind's (a wiring fault)."""
    if not isinstance(request.spec, kind):
        raise AgentError(f"{kind.__name__} expected, got the {request.spec.type!r} agent's spec")
    return request.spec


def offered_skill_folders(request: AgentRequest) -> list[str]:
    """Every offered skill's folder inside the sandbox (``request.plugins``), in order.

    Example: ``offered_skill_folders(request)`` -> ``["/s/plugins/team/skills/pdf"]``.
    """
    return [folder for plugin in request.plugins for _, folder in plugin.skills]


async def link_skills(sandbox: Sandbox, folders: list[str], target: str) -> None:
    """``target/<name>`` as a link to each skill folder (the staged copies stay read-only); one
    command in the sandbox. ``AgentError`` when the links cannot be made."""
    if not folders:
        return
    script = 'mkdir -p "$1" && cd "$1" && shift && for f; do ln -sfn "$f" "${f##*/}"; done'
    result = await sandbox.exec(["/bin/sh", "-c", script, "sh", target, *folders], timeout=60)
    if result.exit_code != 0:
        raise AgentError(f"cannot link the skills into {target}: {result.output.strip()[-300:]}")


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
    if request.endpoint is None or not request.endpoint.scripted:
        return spec.model
    return request.endpoint.model or scripted_default
