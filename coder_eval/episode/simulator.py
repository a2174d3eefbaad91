"""A simulated user at run time: after each agent reply a simulator model writes the next user
message (the task's ``simulation:`` block, ``coder_eval.task.simulation``, says who the user is).

Example::

    with ExitStack() as stack:                                        # per dialog
        simulator = open_simulation(task.simulation, task.prompt, task_dir=task.source_dir,
                                    seed=plan.seed, stack=stack, check=None)
        text = await simulator.next_message(agent_reply, sink)          # None: the dialog ends

See docs/simulation.md.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the client is imported when a simulator runs: it is slow to import
    from anthropic.types import MessageParam

from coder_eval.agents.base import AgentReply, EventSink
from coder_eval.errors import AgentError
from coder_eval.task.simulation import DEFAULT_MODEL, SCRIPTED, SimulationSpec
from coder_eval.trajectory import CriterionResult, Message, Usage
from coder_eval.untrusted_json import visible, visible_data

REQUEST_TIMEOUT_S = 120.0

Check = Callable[[str], Awaitable[list[CriterionResult]]]
"""Evaluates the task's criteria on the sandbox as it is now, given the agent's latest reply."""


def system_prompt(spec: SimulationSpec, opening: str) -> str:
    """The simulator's instructions: persona, goal, constraints, the opening message, the stop rule."""
    rules = "\n".join(f"- {rule}" for rule in spec.constraints) or "- none"
    return (
        "You play the user of an AI coding assistant. Write only the user's next message, in "
        "character; never reply as the assistant.\n\n"
        f"Persona: {spec.persona or 'a developer who wants the task done'}\n"
        f"Your goal: {spec.goal}\n"
        f"Constraints:\n{rules}\n\n"
        f"You opened the conversation with this message:\n<opening>\n{opening}\n</opening>\n\n"
        "In this conversation the assistant's replies are the user turns and your own messages the "
        f"assistant turns. When your goal is met, or the conversation can make no more progress, "
        f"write {spec.stop_token} (alone, or at the end of a last short message)."
    )


@dataclass(frozen=True)
class Endpoint:
    """Where the simulator is served; None ``base_url``/``api_key`` = the anthropic client's defaults."""

    model: str
    base_url: str | None = None
    api_key: str | None = None


def open_simulation(
    spec: SimulationSpec, opening: str, *, task_dir: Path, seed: int, stack: ExitStack, check: Check | None
) -> Simulator:
    """A simulator for one episode; a scripted one gets its own server, open while ``stack`` is.

    Example: ``open_simulation(task.simulation, task.prompt, task_dir=task.source_dir, seed=plan.seed,
    stack=stack, check=None)``. Raises ``AgentError`` when a real model has no API key.
    """
    if spec.model != SCRIPTED:
        if not any(os.environ.get(name) for name in spec.model_keys()):
            raise AgentError(
                f"simulation.model {spec.model!r} needs ANTHROPIC_API_KEY in the environment "
                "(or use model: scripted with a 'scripted' block)"
            )
        return Simulator(spec, opening, Endpoint(spec.model), check)
    from coder_eval.scripted import ScriptedServer, load_script

    script = load_script(spec.scripted or {}, base_dir=task_dir)
    script = script.model_copy(update={"answer_without_tools": True})  # the simulator offers no tools
    server = stack.enter_context(ScriptedServer(script, seed=seed))
    return Simulator(spec, opening, Endpoint(script.model or DEFAULT_MODEL, server.base_url, SCRIPTED), check)


class Simulator:
    """The simulated user of one dialog (a ``Conversation``): checks, the turn cap, then the model."""

    def __init__(self, spec: SimulationSpec, opening: str, endpoint: Endpoint, check: Check | None) -> None:
        self.spec = spec
        self.system = system_prompt(spec, opening)
        self.endpoint = endpoint
        self.check = check
        self.history: list[MessageParam] = []
        self.user_turns = 0
        self.tokens = 0

    async def next_message(self, reply: AgentReply, sink: EventSink) -> str | None:
        """The next user message; None once the criteria pass, the cap is reached or the simulator stops."""
        if self.check is not None and await self._criteria_pass(self.check, reply, sink):
            self._end(sink, "criteria_passed")
            return None
        if self.user_turns >= self.spec.max_turns:
            self._end(sink, "max_turns")
            return None
        budget = self.spec.max_total_tokens
        if budget is not None and self.tokens >= budget:
            self._end(sink, "max_total_tokens")
            return None
        self.history.append({"role": "user", "content": reply.text.strip() or "(no reply)"})
        text, model, usage = await self._ask()
        self.tokens += usage.total
        self.history.append({"role": "assistant", "content": text})
        said = [{"type": "text", "text": text}]
        sink.write(Message(role="user", content=said, model=model, usage=usage, simulated=True))
        if self.spec.stop_token in text:
            self._end(sink, "stop_token")
            return None
        self.user_turns += 1
        return text

    async def _criteria_pass(self, check: Check, reply: AgentReply, sink: EventSink) -> bool:
        """Check the criteria now and record it; True when stopping on them and every gating one passed."""
        results = await check(reply.text)
        gating = [r for r in results if r.gating]
        passed = bool(gating) and all(r.passed and r.error is None for r in gating)
        keep = {"criterion_id", "kind", "score", "passed", "gating", "error"}
        rows = [r.model_dump(include=keep) for r in results]
        body = {"type": "criteria_check", "turn": reply.turn, "gating_passed": passed, "results": rows}
        sink.write(Message(role="system", content=[body]))
        return passed and self.spec.stop_when_criteria_pass

    def _end(self, sink: EventSink, reason: str) -> None:
        body = {"type": "dialog_end", "reason": reason, "user_turns": self.user_turns}
        sink.write(Message(role="system", content=[body]))

    async def _ask(self) -> tuple[str, str, Usage]:
        """One simulator call: its text, model and usage; ``AgentError`` when it fails."""
        import anthropic

        endpoint = self.endpoint
        client = anthropic.AsyncAnthropic(
            base_url=endpoint.base_url, api_key=endpoint.api_key, timeout=REQUEST_TIMEOUT_S
        )
        async with client:
            try:
                response = await client.messages.create(
                    model=endpoint.model,
                    max_tokens=self.spec.max_tokens,
                    system=visible(self.system),
                    messages=visible_data(self.history),  # the agent's replies: valid Unicode only
                )
            except anthropic.APIError as exc:
                raise AgentError(f"user simulator ({endpoint.model}): {type(exc).__name__}: {exc}") from exc
        text = "".join(block.text for block in response.content if block.type == "text").strip()
        if not text:
            raise AgentError(
                f"user simulator ({endpoint.model}) wrote no text (stop_reason {response.stop_reason!r})"
            )
        used = response.usage
        usage = Usage(
            input_tokens=used.input_tokens,
            output_tokens=used.output_tokens,
            cache_read_tokens=used.cache_read_input_tokens or 0,
            cache_creation_tokens=used.cache_creation_input_tokens or 0,
        )
        return text, response.model, usage
