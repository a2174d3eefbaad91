"""Agent kinds, listed in one literal table of ``kind -> (spec class, implementation)``; third parties
add theirs through the ``coder_eval.agents`` entry-point group (``name = "package.module:AgentClass"``,
the class naming its spec in ``Spec``) or a ``coder_eval.plugins`` hook (``coder_eval.plugins``;
docs/agents.md, "Writing an agent plugin").

Example::

    spec_class = AGENTS["codex"].spec          # CodexSpec: validates the task's agent block
    agent = make_agent("codex")                # the implementation, imported on first use
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal, NamedTuple, Union, cast

from pydantic import AfterValidator, ConfigDict, Discriminator, Tag, ValidationError

from coder_eval.agents.base import Agent, AgentRequest, AgentResult, EventSink, ModelEndpoint
from coder_eval.agents.claude_code.spec import ClaudeCodeSpec
from coder_eval.agents.codex.spec import CodexSpec
from coder_eval.agents.command_spec import CommandSpec
from coder_eval.agents.gemini.spec import GeminiSpec
from coder_eval.agents.opencode.spec import OpenCodeSpec
from coder_eval.agents.spec import (
    AgentSpecBase,
    Capabilities,
    CliAgentSpec,
    FromEnv,
    LocalPlugin,
    RealEndpoint,
    kind_field,
    resolve_env,
)
from coder_eval.errors import AgentError, did_you_mean, unknown_name


class NoneSpec(AgentSpecBase):
    """``type: none``: does nothing (grader checks)."""

    CAPABILITIES: ClassVar[Capabilities] = Capabilities(checks_graders=True, needs_prompt=False)

    type: Literal["none"] = kind_field("none")


class OracleSpec(AgentSpecBase):
    """``type: oracle``: runs the task's ``reference_solution``."""

    CAPABILITIES: ClassVar[Capabilities] = Capabilities(checks_graders=True, runs_reference=True)

    type: Literal["oracle"] = kind_field("oracle")


class AgentKind(NamedTuple):
    """One row of the table: the spec a task's block validates against, and the implementation."""

    spec: type[AgentSpecBase]
    implementation: str


AGENTS: dict[str, AgentKind] = {
    "claude-code": AgentKind(ClaudeCodeSpec, "coder_eval.agents.claude_code.agent:ClaudeCodeAgent"),
    "codex": AgentKind(CodexSpec, "coder_eval.agents.codex.agent:CodexAgent"),
    "opencode": AgentKind(OpenCodeSpec, "coder_eval.agents.opencode.agent:OpenCodeAgent"),
    "gemini": AgentKind(GeminiSpec, "coder_eval.agents.gemini.agent:GeminiAgent"),
    "command": AgentKind(CommandSpec, "coder_eval.agents.command:CommandAgent"),
    "oracle": AgentKind(OracleSpec, "coder_eval.agents.oracle:OracleAgent"),
    "none": AgentKind(NoneSpec, "coder_eval.agents.none:NoneAgent"),
}
"""Built-in agent kinds."""

MODEL_AGENTS = frozenset(kind for kind, row in AGENTS.items() if row.spec.CAPABILITIES.talks_to_model)
"""Built-in kinds that talk to a model (a ``model`` endpoint is routed into their sandbox)."""


def kinds_that(can: Callable[[Capabilities], bool]) -> list[str]:
    """The built-in kinds whose capabilities ``can`` accepts, for messages that list them.

    Example: ``kinds_that(lambda c: c.keeps_session)`` -> ``["claude-code"]``.
    """
    return [kind for kind, row in AGENTS.items() if can(row.spec.CAPABILITIES)]


def plugin_agents() -> dict[str, str | type[Any]]:
    """Plugin agents, ``kind -> "module:Class"`` or the class (``coder_eval.plugins``)."""
    from coder_eval.plugins import plugins

    return plugins().agents


def agent_kinds() -> list[str]:
    """Every agent kind: built-in and registered by plugins."""
    return sorted({*AGENTS, *plugin_agents()})


def _load(kind: str, target: str | type[Any]) -> type[Any]:
    """The class ``target`` names; ``AgentError`` naming the plugin when it cannot be imported."""
    if not isinstance(target, str):
        return target
    module, _, name = target.partition(":")
    try:
        return cast(type[Any], getattr(importlib.import_module(module), name))
    except Exception as exc:  # a plugin's module: whatever it raises is reported with its name
        raise AgentError(
            f"agent kind {kind!r}: cannot load {target} ({type(exc).__name__}: {exc}); fix or uninstall "
            "the package that provides it"
        ) from exc


def plugin_spec(kind: str) -> type[AgentSpecBase]:
    """The spec class an entry-point agent declares (``Spec``), else one that takes only ``type`` and
    ``model``; ``AgentError`` for a kind nobody registered."""
    target = plugin_agents().get(kind)
    if target is None:
        raise AgentError(unknown_name("agent kind", kind, agent_kinds()))
    spec = getattr(_load(kind, target), "Spec", None)
    return spec if isinstance(spec, type) and issubclass(spec, AgentSpecBase) else AgentSpecBase


def make_agent(kind: str) -> Agent:
    """An agent instance for ``kind``."""
    target = AGENTS[kind].implementation if kind in AGENTS else plugin_agents().get(kind)
    if target is None:
        raise AgentError(unknown_name("agent kind", kind, agent_kinds()))
    return cast(Agent, _load(kind, target)())


def kinds_with_field(name: str) -> list[str]:
    """The built-in kinds whose spec has field ``name`` (for a hint when another kind's is used)."""
    return [kind for kind, row in AGENTS.items() if name in row.spec.model_fields]


class PluginAgentSpec(AgentSpecBase):
    """An entry-point agent's block before its own spec validates it (see ``resolve_plugin_spec``)."""

    model_config = ConfigDict(extra="allow", frozen=True, populate_by_name=True)


def _kind_of(value: Any) -> str:
    if isinstance(value, dict):
        kind = str(value.get("type", value.get("kind", "claude-code")))
    else:
        kind = str(getattr(value, "type", "claude-code"))
    return kind if kind in AGENTS else "plugin"


if TYPE_CHECKING:
    AgentSpec = AgentSpecBase
else:  # the table becomes a union discriminated on `type` (or `kind`), so errors name the kind
    AgentSpec = Annotated[
        Union[
            (
                *(Annotated[row.spec, Tag(kind)] for kind, row in AGENTS.items()),
                Annotated[PluginAgentSpec, Tag("plugin")],
            )
        ],
        Discriminator(_kind_of),
    ]


def kind_fields(kind: str) -> set[str] | None:
    """The fields of ``kind``'s spec (None for a kind that is not built in)."""
    row = AGENTS.get(kind)
    return set(row.spec.model_fields) if row is not None else None


def override_agent(block: dict[str, Any], top: dict[str, Any]) -> dict[str, Any]:
    """``top`` over an agent ``block``; when ``top`` names another kind, the block's fields that kind
    does not have are dropped (``--agent oracle`` over a Claude Code task runs the oracle).

    Example: ``override_agent({"type": "claude-code", "allowed_tools": ["Bash"]}, {"kind": "oracle"})``
    -> ``{"type": "oracle"}``.
    """
    kind = top.get("type", top.get("kind"))
    if kind is None:
        return {**block, **top}
    fields = kind_fields(str(kind))
    kept = {k: v for k, v in block.items() if k not in ("type", "kind") and (fields is None or k in fields)}
    merged = {**kept, **{k: v for k, v in top.items() if k != "kind"}, "type": kind}
    return merged


def check_partial_agent(block: dict[str, Any]) -> dict[str, Any]:
    """An experiment layer's agent fields: each must belong to some agent kind (the merged block is
    validated whole, against its kind, once the layers are merged).

    Example: ``check_partial_agent({"modle": "x"})`` raises ``ValueError`` with a did-you-mean.
    """
    known = {"kind"} | {name for row in AGENTS.values() for name in row.spec.model_fields}
    kind = block.get("type", block.get("kind"))
    if kind is not None and str(kind) not in agent_kinds():
        raise ValueError(unknown_name("agent kind", str(kind), agent_kinds()))
    for name in block:
        if name not in known and kind not in plugin_agents():
            raise ValueError(
                f"unknown agent field {name!r}{did_you_mean(name, known)}; fields: {', '.join(sorted(known))}"
            )
    return block


PartialAgent = Annotated[dict[str, Any], AfterValidator(check_partial_agent)]
"""An agent block in an experiment layer (defaults, a variant): fields of any kind, merged later."""


def resolve_plugin_spec(spec: AgentSpecBase) -> AgentSpecBase:
    """An entry-point agent's block validated against the spec its plugin declares.

    ``ValueError`` naming the kind for an unknown kind or a field the plugin does not take.
    """
    if not isinstance(spec, PluginAgentSpec):
        return spec
    try:
        declared = plugin_spec(spec.type)
    except AgentError as exc:
        raise ValueError(str(exc)) from exc
    try:
        return declared.model_validate(spec.model_dump())
    except ValidationError as exc:
        fields = [name for name in declared.model_fields if name != "type"]
        problems = "; ".join(_plugin_problem(e, fields) for e in exc.errors())
        raise ValueError(f"agent kind {spec.type!r}: {problems}") from exc


def _plugin_problem(error: Any, fields: list[str]) -> str:
    where = ".".join(map(str, error["loc"]))
    if error["type"] == "extra_forbidden":
        name = str(error["loc"][-1])
        return f"{where}: unknown field{did_you_mean(name, fields)}; its fields: {', '.join(fields)}"
    return f"{where}: {error['msg']}"


__all__ = [
    "AGENTS",
    "MODEL_AGENTS",
    "Agent",
    "AgentKind",
    "AgentRequest",
    "AgentResult",
    "AgentSpec",
    "AgentSpecBase",
    "Capabilities",
    "CliAgentSpec",
    "EventSink",
    "FromEnv",
    "LocalPlugin",
    "ModelEndpoint",
    "PartialAgent",
    "RealEndpoint",
    "agent_kinds",
    "kinds_that",
    "kinds_with_field",
    "make_agent",
    "override_agent",
    "plugin_spec",
    "resolve_env",
    "resolve_plugin_spec",
]
