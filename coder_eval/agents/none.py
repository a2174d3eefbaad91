"""``none``: does nothing. Graders that pass with it are broken (see ``coder-eval validate``)."""

from __future__ import annotations

from coder_eval.agents.base import AgentRequest, AgentResult, EventSink


class NoneAgent:
    """The agent that does nothing."""

    async def run(self, request: AgentRequest, sink: EventSink) -> AgentResult:
        return AgentResult(final_message="")
