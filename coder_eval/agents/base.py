"""The agent seam: an agent takes its own spec, the limits, a prompt and a sandbox, emits events, and
returns when done.

Example::

    agent = make_agent(task.agent.type)
    request = AgentRequest(prompt, task.agent, task.run_limits, sandbox, episode_id, seed, endpoint)
    result = await agent.run(request, sink)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from coder_eval.trajectory import InvalidCause, Status, Usage

if TYPE_CHECKING:
    from coder_eval.agents.raw_events import RawEventLog
    from coder_eval.agents.spec import AgentSpecBase
    from coder_eval.sandbox.base import Sandbox
    from coder_eval.task.limits import RunLimits
    from coder_eval.trajectory import Message, ToolCall, ToolResult


class EventSink(Protocol):
    """Where an agent writes what it does, as it happens."""

    def write(self, event: Message | ToolCall | ToolResult) -> None: ...


@dataclass(frozen=True)
class ModelEndpoint:
    """Where the model is served when the runner provides it: the scripted server, or the harness's
    API proxy in front of a real model (``scripted`` False), which holds the real key; the agent's
    CLI only ever gets ``api_key``, a dummy."""

    base_url: str
    api_key: str = "scripted-dummy-key"
    model: str | None = None
    """The model to ask for: the one the scripted server answers as, or the task's real model."""
    scripted: bool = True

    def env(self) -> dict[str, str]:
        """Environment that points an Anthropic-API client at this endpoint."""
        return {"ANTHROPIC_BASE_URL": self.base_url, "ANTHROPIC_API_KEY": self.api_key}


@dataclass(frozen=True)
class AgentReply:
    """The agent's answer to one user message of a dialog; ``turn`` counts replies from 1."""

    turn: int
    text: str


class Conversation(Protocol):
    """The user's side of a multi-turn dialog (a simulated user: ``coder_eval.episode.simulator``)."""

    async def next_message(self, reply: AgentReply, sink: EventSink) -> str | None:
        """The next user message after ``reply``, or None to end the dialog.

        Writes its own events (the simulated user message) to ``sink``; raises ``AgentError`` when the
        dialog cannot go on (the episode is then invalid).
        """
        ...


@dataclass(frozen=True)
class OfferedPlugin:
    """A plugin the episode offers its agent, as the sandbox holds it (``coder_eval.episode.skill_offer``).

    ``path`` is a plugin folder inside the sandbox (a bare skills root is staged with a ``skills/``
    level added); ``skill_dirs`` are the folders holding its ``<name>/SKILL.md``; ``skills`` each
    skill's name and folder; ``source`` the host folder (or workspace path) it came from.
    """

    name: str
    path: str
    skill_dirs: tuple[str, ...]
    skills: tuple[tuple[str, str], ...]
    source: str


@dataclass(frozen=True)
class AgentRequest:
    """Everything an agent gets for one episode: its own spec and the limits, never the whole task.

    ``conversation`` is set for dialog tasks (a ``simulation`` block) and for ``max_iterations``; only
    agents that keep their session across user turns read it (``Capabilities.keeps_session``).
    ``reference_script`` is the task's reference solution (the ``oracle`` agent runs it); ``task_dir``
    is the task file's folder; ``plugins`` what the agent is offered (an agent that supports skills
    loads them from there, never from ``spec.plugins``); ``raw_events``, when the run keeps them, where
    an agent that runs a CLI writes every raw event it emitted (``coder_eval.agents.raw_events``).
    """

    prompt: str
    spec: AgentSpecBase
    limits: RunLimits
    sandbox: Sandbox
    episode_id: str
    seed: int
    endpoint: ModelEndpoint | None = None
    conversation: Conversation | None = None
    reference_script: str | None = None
    task_dir: Path | None = None
    plugins: tuple[OfferedPlugin, ...] = ()
    raw_events: RawEventLog | None = None


@dataclass
class AgentResult:
    """How the agent's run ended.

    ``invalid`` means the agent was not measured, on the harness's own evidence only (``cause``): its
    CLI is missing or could not start, the harness stopped it, the model endpoint failed as the
    harness saw it. A CLI that dies, exits non-zero or ends without a result is ``agent_error``, the
    agent's failure; what its CLI says of a provider error is kept in ``provider_claim``, unchecked,
    for the episode to weigh against the endpoint's record (``coder_eval.episode.record``).
    """

    status: Status = "completed"
    invalid: bool = False
    error: str | None = None
    cause: InvalidCause | None = None
    """Why it is invalid (set with ``invalid``): ``harness`` or ``provider``."""
    provider_claim: str | None = None
    """The provider error the agent's CLI reported, unchecked (never a reason to be invalid by itself)."""
    usage: Usage = field(default_factory=Usage)
    cost_usd: float | None = None
    num_turns: int = 0
    duration_api_s: float | None = None
    final_message: str | None = None
    versions: dict[str, str] = field(default_factory=dict)


class Agent(Protocol):
    """One kind of agent. Instances are made per episode from the resolved agent block.

    An agent may also define ``host_paths() -> list[Path]``: host folders its program needs to see
    inside an isolating sandbox (its CLI's installation, when that is not the Python running
    coder_eval), shown read-only (``agent_host_paths``).
    """

    async def run(self, request: AgentRequest, sink: EventSink) -> AgentResult:
        """Run to completion. Cancellation (the task timeout) must stop every process it started."""
        ...


def agent_host_paths(agent: Agent) -> list[Path]:
    """The host folders ``agent`` asks to see in its sandbox (none when it does not say)."""
    paths = getattr(agent, "host_paths", None)
    return list(paths()) if callable(paths) else []
