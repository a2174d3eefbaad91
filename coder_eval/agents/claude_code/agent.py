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
import os
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
from coder_eval.pricing import cost_usd, rates_for
from coder_eval.task import TaskSpec
from coder_eval.trajectory import Message

"""Seconds allowed for the SDK to wind down once the CLI has been killed."""


class _StreamEnd(NamedTuple):
    error: BaseException | None = None
    stopped: str | None = None


@dataclass(frozen=True)
class Budget:
    """The run limits checked while the run streams (the runner checks them again afterwards).

    Example: ``Budget(max_total_tokens=5000).exceeded(recorder)`` -> ``"used 5310 tokens > ..."``.
    """

    max_total_tokens: int | None = None
    max_usd: float | None = None

    def exceeded(self, recorder: Recorder) -> str | None:
        """Why the run must stop now, or None."""
        used = recorder.usage
        if self.max_total_tokens is not None and used.total > self.max_total_tokens:
            return f"used {used.total} tokens > max_total_tokens {self.max_total_tokens}; the run was stopped"
        if self.max_usd is None or recorder.model is None or rates_for(recorder.model) is None:
            return None
        cost = cost_usd(recorder.model, used) or 0.0
        if cost > self.max_usd:
            return f"cost ${cost:.4f} > max_usd {self.max_usd:g}; the run was stopped"
        return None


class ClaudeCodeAgent:
    """Runs the Claude Code CLI bundled with claude-agent-sdk on the episode's prompt."""

    async def run(self, request: AgentRequest, sink: EventSink) -> AgentResult:
        """Run to the CLI's result; on cancellation the CLI and its children are killed first."""
        cli = bundled_cli()
        if cli is None:
            return AgentResult(invalid=True, status="infra_error", error="Claude Code CLI not found")
        env = cli_env(request.sandbox.env, request.task.agent.env, request.endpoint, os.environ)
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
            budget = Budget(request.task.run_limits.max_total_tokens, request.task.run_limits.max_usd)
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
    spec, root = request.task.agent, request.sandbox.workdir.rstrip("/")
    return ClaudeAgentOptions(
        cwd=root if Path(root).is_dir() else cli_path.parent,  # a container's workspace: the wrap enters it
        env=env,
        cli_path=str(cli_path),
        model=model_for(request.task, scripted=request.endpoint is not None),
        permission_mode=cast(PermissionMode, spec.permission_mode),
        allowed_tools=list(spec.allowed_tools),
        disallowed_tools=list(spec.disallowed_tools),
        system_prompt=system_prompt(spec.system_prompt, spec.system_prompt_mode),
        setting_sources=list(spec.setting_sources),
        plugins=[{"type": "local", "path": f"{root}/{plugin}"} for plugin in spec.plugins],
        max_turns=max_turns(request.task),
        include_partial_messages=True,
        stderr=on_stderr,
    )


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


def max_turns(task: TaskSpec) -> int | None:
    """The tighter of ``agent.max_turns`` and ``run_limits.max_turns``. Example: (10, 4) -> 4."""
    limits = [n for n in (task.agent.max_turns, task.run_limits.max_turns) if n is not None]
    return min(limits) if limits else None


def model_for(task: TaskSpec, *, scripted: bool) -> str | None:
    """The ``--model`` to pass: the script's model for scripted runs, else ``agent.model``."""
    if not scripted:
        return task.agent.model
    from coder_eval.scripted import load_script

    if task.scripted is None:
        return None
    return load_script(task.scripted, base_dir=task.source_dir).model


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
