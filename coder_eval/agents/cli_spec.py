"""Helpers the CLI agents share: the request's own spec, plugins' skills, turns and the model to run.

Example::

    spec = own_spec(request, CodexSpec)        # the episode's agent block, typed for this kind
    plugin_skills(Path(request.sandbox.workdir), spec.plugins)
    max_turns(spec, request.limits), model_name(request, spec, "gpt-5.1-codex")

The spec classes themselves live beside each agent (``codex/spec.py`` ...), on ``CliAgentSpec``
(``coder_eval.agents.spec``).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from coder_eval.agents.spec import AgentSpecBase, CliAgentSpec, LocalPlugin
from coder_eval.errors import AgentError
from coder_eval.sandbox.base import inside

if TYPE_CHECKING:
    from coder_eval.agents.base import AgentRequest
    from coder_eval.limits import RunLimits

__all__ = ["CliAgentSpec", "LocalPlugin", "max_turns", "model_name", "own_spec", "plugin_skills"]

Spec = TypeVar("Spec", bound=AgentSpecBase)


def own_spec(request: AgentRequest, kind: type[Spec]) -> Spec:
    """The request's spec as ``kind``; ``AgentError`` when it is another kind's (a wiring fault)."""
    if not isinstance(request.spec, kind):
        raise AgentError(f"{kind.__name__} expected, got the {request.spec.type!r} agent's spec")
    return request.spec


def plugin_skills(root: Path, plugins: list[LocalPlugin]) -> list[Path]:
    """The skill folders (``skills/<name>/`` holding a ``SKILL.md``) of ``plugins`` in the sandbox.

    Example: ``plugin_skills(root, [LocalPlugin(path=".plugins/site-tools")])``
    -> ``[root / ".plugins/site-tools/skills/sitectl"]``.
    """
    found: list[Path] = []
    for plugin in plugins:
        folder = inside(root, plugin.path)
        if not folder.is_dir():
            raise AgentError(f"agent.plugins: {plugin.path!r} is not a folder in the sandbox")
        found += sorted(p.parent for p in folder.glob("skills/*/SKILL.md"))
    return found


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
