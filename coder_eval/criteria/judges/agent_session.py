"""One run of a Claude Code judge: a read-only copy of the sandbox, a verdict tool, the CLI's result.

Example::

    session = Session(system, prompt, model="claude-sonnet-4-6", endpoint=None, max_turns=15, timeout=300)
    run = await run_session(session, ctx.sandbox, isolation="auto")
    run.reading        # Reading(score=1.0, passed=True, ...) or None when no verdict was submitted
    run.usage, run.cost_usd, run.steps, run.isolation   # "bwrap" or "copy"

The judge never sees the sandbox itself, only a fresh copy of it (``judge_workspace``), read-only
under bubblewrap where it runs. Its built-in tools are at most Read, Grep, Glob and Bash (Write, Edit,
NotebookEdit, ... disallowed, anything else denied by ``permission_mode: dontAsk``), and its verdict
arrives through ``mcp__judge__submit_verdict``, an in-process MCP tool that keeps the first valid call.

The CLI runs through the seam the ``claude-code`` agent runs through
(``coder_eval.agents.claude_code.session``), with the copy's scrubbed environment: no host variable
reaches it but, for a real model, ``ANTHROPIC_API_KEY`` and ``ANTHROPIC_BASE_URL``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from claude_agent_sdk import ClaudeAgentOptions, create_sdk_mcp_server, tool
from claude_agent_sdk.types import McpSdkServerConfig

from coder_eval.agents.base import ModelEndpoint
from coder_eval.agents.claude_code.session import (
    SessionEnd,
    cli_host_paths,
    find_cli,
    run_cli,
    session_env,
)
from coder_eval.criteria.judges.llm import SERVER, VERDICT_TOOL, VERDICT_TOOL_NAME, read_verdict
from coder_eval.criteria.judges.panel import Reading
from coder_eval.criteria.judges.workspace import Isolation, Workspace, judge_workspace
from coder_eval.criteria.transcript import DETAIL_LIMIT, ToolStep, tool_steps
from coder_eval.errors import GraderError
from coder_eval.sandbox.base import Sandbox
from coder_eval.trajectory import Event, Message, ToolCall, ToolResult, Usage

READ_TOOLS = ("Read", "Grep", "Glob", "Bash")
"""The only built-in tools the judge is offered."""
DISALLOWED_TOOLS = (
    "Write",
    "Edit",
    "MultiEdit",
    "NotebookEdit",
    "Agent",
    "Task",
    "Skill",
    "WebFetch",
    "WebSearch",
)
"""Refused even if a setting offered them."""
"""Seconds allowed for the SDK to wind down once the CLI has been killed."""


@dataclass(frozen=True)
class Session:
    """What one judge run is asked, of which model, within which limits."""

    system: str
    prompt: str
    model: str
    endpoint: ModelEndpoint | None
    max_turns: int
    timeout: float
    tools: tuple[str, ...] = READ_TOOLS
    turn_timeout: float | None = None


class SessionResult(NamedTuple):
    """How a judge run ended; ``problem`` says why ``reading`` is None; ``hopeless``: do not retry."""

    reading: Reading | None
    usage: Usage
    cost_usd: float | None
    model: str
    num_turns: int
    steps: list[str]
    isolation: str
    problem: str | None = None
    hopeless: bool = False


@dataclass
class VerdictBox:
    """Keeps the first valid ``submit_verdict`` call of one run; an invalid one is answered as an error."""

    reading: Reading | None = None

    def server(self) -> McpSdkServerConfig:
        """The in-process MCP server offering ``submit_verdict``."""
        spec = VERDICT_TOOL
        description = f"{spec['description']} Call it exactly once, at the end; the verdict is final."

        @tool(spec["name"], description, spec["input_schema"])
        async def submit_verdict(args: dict[str, Any]) -> dict[str, Any]:
            return self.submit(args)

        return create_sdk_mcp_server(SERVER, tools=[submit_verdict])

    def submit(self, args: dict[str, Any]) -> dict[str, Any]:
        """Record ``args`` as the verdict when valid; the tool result the judge sees."""
        if self.reading is not None:
            return _reply("A verdict was already recorded and is final. End your turn now.", error=True)
        try:
            self.reading = read_verdict(args)
        except ValueError as exc:
            return _reply(f"Invalid verdict, not recorded: {exc}\nCall submit_verdict again.", error=True)
        return _reply("Verdict recorded. End your turn now, without further tool calls.")


def _reply(text: str, error: bool = False) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "is_error": error}


class _Events:
    def __init__(self) -> None:
        self.events: list[Event] = []

    def write(self, event: Message | ToolCall | ToolResult) -> None:
        self.events.append(event)


async def run_session(session: Session, source: Sandbox, isolation: Isolation) -> SessionResult:
    """Run the judge once on a fresh copy of ``source``'s workspace; ``GraderError`` when it cannot
    start at all."""
    cli = find_cli()
    if cli is None:
        raise GraderError("agent_judge needs the Claude Code CLI (install claude-agent-sdk)")
    box, events = VerdictBox(), _Events()
    shown = tuple(cli_host_paths())  # the CLI, where it lives outside this Python
    async with judge_workspace(source, isolation, _base_url(session), shown) as workspace:
        end = await run_cli(
            cli,
            workspace.sandbox,
            session_env(workspace.sandbox.env, {}, session.endpoint),
            events,
            session.prompt,
            lambda env, cli_path: _options(session, workspace, env, cli_path, box),
            timeout=session.timeout,
            turn_timeout=session.turn_timeout,
            stderr_lines=20,
        )
    outcome = end.result
    steps = tool_steps(events.events)
    problem = None if box.reading else _problem(session, end, steps)
    return SessionResult(
        box.reading,
        outcome.usage,
        outcome.cost_usd,
        end.model or session.model,
        outcome.num_turns,
        [step.describe(200) for step in steps][:DETAIL_LIMIT],
        workspace.isolation,
        problem,
        end.hopeless,
    )


def _base_url(session: Session) -> str:
    """Where the judge's model is: the scripted server, else the real API (``ANTHROPIC_BASE_URL``)."""
    if session.endpoint is not None:
        return session.endpoint.base_url
    return os.environ.get("ANTHROPIC_BASE_URL") or "https://api.anthropic.com"


def _options(
    session: Session, workspace: Workspace, env: dict[str, str], cli_path: Path, box: VerdictBox
) -> ClaudeAgentOptions:
    root = workspace.sandbox.workdir
    return ClaudeAgentOptions(
        cwd=root if Path(root).is_dir() else cli_path.parent,  # a container's workspace: the wrap enters it
        env=env,
        cli_path=str(cli_path),
        model=session.model,
        tools=list(session.tools),
        allowed_tools=[*session.tools, VERDICT_TOOL_NAME],
        disallowed_tools=list(DISALLOWED_TOOLS),
        permission_mode="dontAsk",
        system_prompt={"type": "preset", "preset": "claude_code", "append": session.system},
        setting_sources=[],
        mcp_servers={SERVER: box.server()},
        strict_mcp_config=True,
        max_turns=session.max_turns,
        include_partial_messages=True,
    )


def _problem(session: Session, end: SessionEnd, steps: Sequence[ToolStep]) -> str:
    status, error = end.result.status, end.result.error
    if end.timed_out:
        why = f"timed out after {session.timeout:g} s"
    elif status == "max_turns":
        why = f"reached max_turns ({session.max_turns})"
    elif status != "completed":
        why = f"failed ({status}: {error})"
    else:
        why = "ended"
    refused = [step.result for step in steps if step.name == VERDICT_TOOL_NAME and not step.succeeded]
    if not refused:
        return f"the judge {why} without calling submit_verdict"
    last = " ".join(refused[-1].output.split())[:300] if refused[-1] is not None else "no result"
    return f"the judge {why} without a valid submit_verdict call (last refused: {last})"
