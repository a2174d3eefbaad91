"""Simulated users: after each agent reply a simulator model writes the next user message.

Example (task YAML)::

    initial_prompt: Add a --verbose flag to the CLI.
    agent: {kind: claude-code, model: scripted}
    simulation:
      persona: A terse maintainer who answers questions but never volunteers details.
      goal: The flag exists, prints debug lines, and is documented in README.md.
      constraints: [Never write code yourself., Answer in at most two sentences.]
      stop_token: "<<<END>>>"         # the simulator ends the dialog by writing it (the default)
      max_turns: 8                    # user turns after the initial prompt (the default)
      model: claude-sonnet-4-6        # or scripted, with a `scripted:` block (offline)
      check_criteria: end_of_dialog   # or every_turn (alias both): criteria checked after each reply too
      stop_when_criteria_pass: false  # true: end once every gating criterion passes (checked each turn)
      max_total_tokens: 50000         # the simulator's own tokens; the dialog ends when they run out
      n_trials: 3                     # dialogs per task and repeat (episodes, like repeats)

The agent keeps its session across turns. Each simulator message is a ``message`` event with
``role: user``, ``simulated: true`` and the simulator's model and usage (never counted in the
episode's agent totals). ``system`` messages record per-turn criteria checks (``criteria_check``)
and why the dialog ended (``dialog_end``). See docs/simulation.md.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, field_validator, model_validator

if TYPE_CHECKING:  # the client is imported when a simulator runs: it is slow to import
    from anthropic.types import MessageParam

from coder_eval.agents.base import AgentReply, EventSink
from coder_eval.errors import AgentError
from coder_eval.scripted.script import ScriptRef
from coder_eval.trajectory import CriterionResult, Message, Usage
from coder_eval.untrusted_json import visible, visible_data

SCRIPTED = "scripted"
DEFAULT_MODEL = "claude-sonnet-4-6"
"""The simulator model when none is given; also the name a scripted simulator answers as."""
REQUEST_TIMEOUT_S = 120.0

Check = Callable[[str], Awaitable[list[CriterionResult]]]
"""Evaluates the task's criteria on the sandbox as it is now, given the agent's latest reply."""


class SimulationSpec(BaseModel):
    """The ``simulation`` block of a task: who the simulated user is and when the dialog ends."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    persona: str = Field(default="", description="Who the simulated user is and how they write.")
    goal: str = Field(min_length=1, description="What the user wants; the simulator stops once it is met.")
    constraints: list[str] = Field(default_factory=list, description="Rules the simulated user follows.")
    enabled: bool = Field(default=True, description="false: the block is kept but no simulated user runs.")
    stop_token: str = Field(default="<<<END>>>", min_length=1, description="Written to end the dialog.")
    max_turns: int = Field(default=8, ge=1, description="User turns after the initial prompt.")
    model: str = Field(default=DEFAULT_MODEL, description="Simulator model id, or 'scripted'.")
    scripted: ScriptRef = Field(
        default=None, description="Script for model 'scripted': inline, or a file relative to the task."
    )
    max_tokens: int = Field(default=1024, ge=1, description="max_tokens of each simulator call.")
    check_criteria: Literal["end_of_dialog", "every_turn"] = Field(
        default="end_of_dialog",
        description="every_turn (the original's 'both' too): check the criteria after each agent reply too.",
    )
    stop_when_criteria_pass: bool = Field(
        default=False,
        validation_alias=AliasChoices("stop_when_criteria_pass", "stop_on_criteria_pass"),
        description="End the dialog once every gating criterion passes (checked after each reply).",
    )
    max_total_tokens: int | None = Field(
        default=None, ge=1, description="Tokens the simulator may use; the dialog ends when they run out."
    )
    n_trials: int = Field(default=1, ge=1, le=100, description="Dialogs per task and repeat (episodes).")
    parallel_trials: bool = Field(
        default=True, description="false: the trials of one task and variant run one after another."
    )

    @field_validator("check_criteria", mode="before")
    @classmethod
    def _both(cls, value: object) -> object:
        return "every_turn" if value == "both" else value  # end of dialog and every turn: every_turn

    @model_validator(mode="after")
    def _consistent(self) -> SimulationSpec:
        if self.model == SCRIPTED and self.scripted is None:
            raise ValueError("model is 'scripted' but there is no 'scripted' block; add one")
        if self.model != SCRIPTED and self.scripted is not None:
            raise ValueError(f"a 'scripted' block needs model: scripted (model is {self.model!r})")
        return self

    @property
    def checks_each_turn(self) -> bool:
        """Whether the criteria are checked after each agent reply (and not only at the end)."""
        return self.check_criteria == "every_turn" or self.stop_when_criteria_pass

    def model_keys(self) -> tuple[str, ...]:
        """Host variables the simulator's model authenticates with (either one); ``()`` for scripted."""
        return () if self.model == SCRIPTED else ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")


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
