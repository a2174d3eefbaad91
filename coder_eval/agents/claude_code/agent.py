"""``claude-code``: the real Claude Code CLI, driven through claude-agent-sdk.

Example::

    agent = ClaudeCodeAgent()
    result = await agent.run(AgentRequest(prompt, sandbox, task, episode_id, seed, endpoint), sink)
    result.status, result.usage, result.cost_usd, result.versions["claude_code"]

The CLI runs in the sandbox's workspace with the environment ``environment.py`` builds, through the
launcher (``launcher.py``) that keeps host variables out and lets a timeout kill everything the CLI
started. Every message is written to ``sink`` as it streams (``recorder.py``); the end is mapped to
a status honestly (``outcome.py``). A dialog task's follow-up user messages go to the same session
(``dialog.py``).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import sys
from collections import deque
from collections.abc import AsyncGenerator
from contextlib import aclosing
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple, cast

import claude_agent_sdk
from claude_agent_sdk import ClaudeAgentOptions, ResultMessage, query
from claude_agent_sdk.types import PermissionMode, SystemPromptPreset

from coder_eval.agents.base import AgentRequest, AgentResult, EventSink
from coder_eval.agents.claude_code.dialog import Dialog
from coder_eval.agents.claude_code.environment import SDK_VARIABLES, bad_names, cli_env
from coder_eval.agents.claude_code.launcher import Launcher, bundled_cli, cli_version, settle
from coder_eval.agents.claude_code.outcome import agent_result
from coder_eval.agents.claude_code.recorder import Recorder
from coder_eval.agents.claude_code.spec import ClaudeCodeSpec
from coder_eval.agents.cli_spec import max_turns, own_spec
from coder_eval.agents.spec import resolve_env
from coder_eval.errors import AgentError
from coder_eval.pricing import cost_usd, rates_for
from coder_eval.trajectory import Message

"""Seconds allowed for the SDK to wind down once the CLI has been killed."""


class _StreamEnd(NamedTuple):
    error: BaseException | None = None
    stopped: str | None = None


@dataclass(frozen=True)
class Budget:
    """The dollar budget, checked while the run streams (token budgets are the watch's).

    Example: ``Budget(max_usd=0.5).exceeded(recorder)`` -> ``"cost $0.5120 > max_usd 0.5; ..."``.
    """

    max_usd: float | None = None

    def exceeded(self, recorder: Recorder) -> str | None:
        """Why the run must stop now, or None."""
        used = recorder.usage
        if self.max_usd is None or recorder.model is None or rates_for(recorder.model) is None:
            return None
        cost = cost_usd(recorder.model, used) or 0.0
        if cost > self.max_usd:
            return f"cost ${cost:.4f} > max_usd {self.max_usd:g}; the run was stopped"
        return None


class ClaudeCodeAgent:
    """Runs the Claude Code CLI bundled with claude-agent-sdk on the episode's prompt."""

    def host_paths(self) -> list[Path]:
        """The CLI's folder, when it is not inside the Python environment running coder_eval."""
        cli = bundled_cli()
        if cli is None or cli.resolve().is_relative_to(Path(sys.prefix).resolve()):
            return []
        return [cli.resolve().parent]

    async def run(self, request: AgentRequest, sink: EventSink) -> AgentResult:
        """Run to the CLI's result; on cancellation the CLI and its children are killed first."""
        cli = bundled_cli()
        if cli is None:
            return AgentResult(invalid=True, status="infra_error", error="Claude Code CLI not found")
        spec = own_spec(request, ClaudeCodeSpec)
        try:
            agent_env = resolve_env(spec.env)
        except AgentError as exc:
            return AgentResult(invalid=True, status="infra_error", error=str(exc))
        env = cli_env(request.sandbox.env, agent_env, request.endpoint, os.environ)
        bad = bad_names(env)
        if bad:
            return AgentResult(
                invalid=True, status="infra_error", error=f"agent.env: invalid variable names {bad}"
            )
        sink.write(Message(role="user", content=[{"type": "text", "text": request.prompt}]))
        recorder, stderr = Recorder(sink), deque[str](maxlen=50)
        with Launcher(
            cli, [*env, *SDK_VARIABLES], wrap=request.sandbox.wrap, cwd=request.sandbox.workdir
        ) as launcher:
            options = make_options(request, {**env, **launcher.env}, launcher.path, stderr.append)
            budget = Budget(request.limits.max_usd)
            dialog = Dialog(request.prompt, request.conversation, sink)
            stream = asyncio.create_task(_stream(dialog, options, recorder, launcher, budget))
            try:
                end = await asyncio.shield(stream)
            finally:
                launcher.kill()
                await settle(stream)
                recorder.flush_all()
        result = agent_result(recorder, end.error, list(stderr), end.stopped)
        if dialog.error is not None:
            result.status, result.invalid = "infra_error", True
            result.error = f"the dialog could not go on: {dialog.error}"
        result.versions = {
            "claude_code": recorder.version or cli_version(cli) or "unknown",
            "claude_agent_sdk": claude_agent_sdk.__version__,
        }
        return result


def make_options(
    request: AgentRequest, env: dict[str, str], cli_path: Path, on_stderr: Any
) -> ClaudeAgentOptions:
    """The SDK options for one episode (see docs/claude_code.md for each agent field)."""
    spec, root = own_spec(request, ClaudeCodeSpec), request.sandbox.workdir.rstrip("/")
    options = ClaudeAgentOptions(
        cwd=root if Path(root).is_dir() else cli_path.parent,  # a container's workspace: the wrap enters it
        env=env,
        cli_path=str(cli_path),
        model=request.endpoint.model if request.endpoint is not None else spec.model,
        permission_mode=cast(PermissionMode, spec.permission_mode),
        allowed_tools=list(spec.allowed_tools),
        disallowed_tools=list(spec.disallowed_tools),
        system_prompt=system_prompt(spec.instructions(), spec.system_prompt_mode),
        setting_sources=list(spec.setting_sources),
        plugins=[{"type": "local", "path": plugin.path} for plugin in request.plugins],
        max_turns=max_turns(spec, request.limits),
        include_partial_messages=True,
        stderr=on_stderr,
        settings=json.dumps(spec.claude_settings)
        if isinstance(spec.claude_settings, dict) and spec.claude_settings
        else None,
    )
    return dataclasses.replace(options, **spec.sdk_options) if spec.sdk_options else options


def system_prompt(text: str | None, mode: str) -> str | SystemPromptPreset:
    """Claude Code's own system prompt, with ``text`` appended, or ``text`` alone (``replace``).

    Example: ``system_prompt("Be terse.", "append")``
    -> ``{"type": "preset", "preset": "claude_code", "append": "Be terse."}``.
    """
    if text is not None and mode == "replace":
        return text
    preset: SystemPromptPreset = {"type": "preset", "preset": "claude_code"}
    if text:
        preset["append"] = text
    return preset


async def _stream(
    dialog: Dialog, options: ClaudeAgentOptions, recorder: Recorder, launcher: Launcher, budget: Budget
) -> _StreamEnd:
    """Feed every SDK message to ``recorder`` (and each result to ``dialog``, which writes the next
    user message); stop early (killing the CLI) when over budget or when the CLI is retrying an
    authentication failure."""
    try:
        messages = cast(AsyncGenerator[Any, None], query(prompt=dialog.prompts(), options=options))
        async with aclosing(messages):
            async for message in messages:
                recorder.handle(message)
                if isinstance(message, ResultMessage):
                    dialog.on_result(message)
                if recorder.hopeless:
                    launcher.kill()
                    return _StreamEnd()
                stopped = budget.exceeded(recorder)
                if stopped is not None:
                    launcher.kill()
                    return _StreamEnd(stopped=stopped)
    except Exception as exc:  # the SDK's errors and a CLI that died are outcomes, mapped later
        return _StreamEnd(error=exc)
    return _StreamEnd()
