"""Agent kinds, listed in one literal table; third parties add theirs through the
``coder_eval.agents`` entry-point group (``name = "package.module:AgentClass"``).
"""

from __future__ import annotations

from importlib.metadata import entry_points
from typing import Any

from coder_eval.agents.base import Agent, AgentRequest, AgentResult, EventSink, ModelEndpoint
from coder_eval.agents.command import CommandAgent
from coder_eval.agents.none import NoneAgent
from coder_eval.agents.oracle import OracleAgent
from coder_eval.errors import AgentError, unknown_name

AGENTS: dict[str, type[Any]] = {
    "oracle": OracleAgent,
    "none": NoneAgent,
    "command": CommandAgent,
}


def _claude_code() -> type[Any]:
    from coder_eval.agents.claude_code import ClaudeCodeAgent

    return ClaudeCodeAgent


def _codex() -> type[Any]:
    from coder_eval.agents.codex import CodexAgent

    return CodexAgent


def _opencode() -> type[Any]:
    from coder_eval.agents.opencode import OpenCodeAgent

    return OpenCodeAgent


def _gemini() -> type[Any]:
    from coder_eval.agents.gemini import GeminiAgent

    return GeminiAgent


BUILTIN_LAZY = {"claude-code": _claude_code, "codex": _codex, "opencode": _opencode, "gemini": _gemini}


def agent_kinds() -> list[str]:
    """Every agent kind: built-in and registered through entry points."""
    plugins = [ep.name for ep in entry_points(group="coder_eval.agents")]
    return sorted({*AGENTS, *BUILTIN_LAZY, *plugins})


def make_agent(kind: str) -> Agent:
    """An agent instance for ``kind``."""
    if kind in AGENTS:
        return AGENTS[kind]()  # type: ignore[no-any-return]
    if kind in BUILTIN_LAZY:
        return BUILTIN_LAZY[kind]()()  # type: ignore[no-any-return]
    for ep in entry_points(group="coder_eval.agents"):
        if ep.name == kind:
            return ep.load()()  # type: ignore[no-any-return]
    raise AgentError(unknown_name("agent kind", kind, agent_kinds()))


__all__ = [
    "AGENTS",
    "Agent",
    "AgentRequest",
    "AgentResult",
    "EventSink",
    "ModelEndpoint",
    "agent_kinds",
    "make_agent",
]
