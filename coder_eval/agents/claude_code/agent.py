"""``claude-code``: the real Claude Code CLI, driven through claude-agent-sdk.

Example::

    agent = ClaudeCodeAgent()
    result = await agent.run(AgentRequest(prompt, sandbox, task, episode_id, seed, endpoint), sink)
    result.status, result.usage, result.cost_usd, result.versions["claude_code"]

The CLI runs in the sandbox's workspace through ``session.py``, the seam the agent judge shares: the
environment ``environment.py`` builds, the launcher (``launcher.py``) that keeps host variables out
and lets a timeout kill everything the CLI started, every message written to ``sink`` as it streams
(``recorder.py``), the end mapped to a status honestly (``outcome.py``). This module adds the task's
options, the dollar budget and the dialog. A dialog task's follow-up user messages go to the same session
(``dialog.py``).
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import claude_agent_sdk
from claude_agent_sdk import ClaudeAgentOptions, ResultMessage
from claude_agent_sdk.types import PermissionMode, SystemPromptPreset

from coder_eval.agents.base import AgentRequest, AgentResult, EventSink
from coder_eval.agents.claude_code.dialog import Dialog
from coder_eval.agents.claude_code.session import (
    Progress,
    cli_host_paths,
    find_cli,
    run_cli,
    session_env,
    version_of,
)
from coder_eval.agents.claude_code.spec import ClaudeCodeSpec
from coder_eval.agents.cli_spec import max_turns, own_spec
from coder_eval.agents.spec import resolve_env
from coder_eval.errors import AgentError
from coder_eval.pricing import cost_usd, rates_for
from coder_eval.trajectory import Message


@dataclass(frozen=True)
class Budget:
    """The dollar budget, checked while the run streams (token budgets are the watch's).

    Example: ``Budget(max_usd=0.5).exceeded(progress)`` -> ``"cost $0.5120 > max_usd 0.5; ..."``.
    """

    max_usd: float | None = None

    def exceeded(self, progress: Progress) -> str | None:
        """Why the run must stop now, or None."""
        model = progress.model
        if self.max_usd is None or model is None or rates_for(model) is None:
            return None
        cost = cost_usd(model, progress.usage) or 0.0
        if cost > self.max_usd:
            return f"cost ${cost:.4f} > max_usd {self.max_usd:g}; the run was stopped"
        return None


class ClaudeCodeAgent:
    """Runs the Claude Code CLI bundled with claude-agent-sdk on the episode's prompt."""

    def host_paths(self) -> list[Path]:
        """The CLI's folder, when it is not inside the Python environment running coder_eval."""
        return cli_host_paths()

    async def run(self, request: AgentRequest, sink: EventSink) -> AgentResult:
        """Run to the CLI's result; on cancellation the CLI and its children are killed first."""
        cli = find_cli()
        if cli is None:
            return AgentResult(
                invalid=True, status="infra_error", error="Claude Code CLI not found", cause="harness"
            )
        try:
            env = session_env(
                request.sandbox.env, resolve_env(own_spec(request, ClaudeCodeSpec).env), request.endpoint
            )
        except AgentError as exc:
            return AgentResult(invalid=True, status="infra_error", error=str(exc), cause="harness")
        sink.write(Message(role="user", content=[{"type": "text", "text": request.prompt}]))
        # a scripted model (the runner's endpoint) has no price: no dollar budget can stop it
        budget = Budget(request.limits.max_usd if request.endpoint is None else None)
        dialog = Dialog(request.prompt, request.conversation, sink)

        def watch(message: Any, progress: Progress) -> str | None:
            if isinstance(message, ResultMessage):
                dialog.on_result(message)
            return budget.exceeded(progress)

        end = await run_cli(
            cli,
            request.sandbox,
            env,
            sink,
            dialog.prompts(),
            lambda env, cli_path: make_options(request, env, cli_path),
            watch=watch,
            raw=request.raw_events,
        )
        result = end.result
        if dialog.error is not None:
            result.status, result.invalid, result.cause = "infra_error", True, "harness"
            result.error = f"the dialog could not go on: {dialog.error}"
        result.versions = {
            "claude_code": end.version or version_of(cli) or "unknown",
            "claude_agent_sdk": claude_agent_sdk.__version__,
        }
        return result


def make_options(request: AgentRequest, env: dict[str, str], cli_path: Path) -> ClaudeAgentOptions:
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
