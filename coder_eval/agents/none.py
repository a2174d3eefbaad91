"""``none``: does nothing. Graders that pass with it are broken (see ``coder-eval validate``)."""

from __future__ import annotations

from pathlib import Path

from coder_eval.agents.base import AgentRequest, AgentResult, EventSink


class NoneAgent:
    """The agent that does nothing."""

    def host_paths(self) -> list[Path]:
        return []

    async def run(self, request: AgentRequest, sink: EventSink) -> AgentResult:
        return AgentResult(final_message="")
