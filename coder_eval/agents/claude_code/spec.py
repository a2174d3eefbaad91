"""What a task may set for the ``claude-code`` agent (the common CLI fields, plus Claude Code's own).

Example::

    agent:
      type: claude-code
      model: claude-sonnet-4-6
      permission_mode: bypassPermissions     # the original default is acceptEdits
      setting_sources: []                    # isolate the run from CLAUDE.md and settings files
      claude_settings: {env: {BASH_DEFAULT_TIMEOUT_MS: "60000"}}
      sdk_options: {max_thinking_tokens: 2000}
"""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar, Literal

from pydantic import Field, field_validator

from coder_eval.agents.spec import Capabilities, CliAgentSpec, RealEndpoint, kind_field
from coder_eval.agents.vocabulary import ToolForm, Vocabulary, same_names

HARNESS_OPTIONS = frozenset(
    {
        "cwd", "env", "cli_path", "stderr", "model", "permission_mode", "allowed_tools", "disallowed_tools",
        "system_prompt", "setting_sources", "plugins", "max_turns", "include_partial_messages", "settings",
        "can_use_tool", "hooks", "resume", "continue_conversation", "fork_session", "debug_stderr",
    }
)  # fmt: skip
"""SDK options coder_eval sets itself: ``sdk_options`` may not override them."""


class ClaudeCodeSpec(CliAgentSpec):
    """The ``claude-code`` agent block."""

    CAPABILITIES: ClassVar[Capabilities] = Capabilities(
        endpoint=RealEndpoint(
            "ANTHROPIC_BASE_URL", "https://api.anthropic.com", "ANTHROPIC_API_KEY", "x-api-key"
        ),
        keeps_session=True,
    )
    TOOLS: ClassVar[Vocabulary] = Vocabulary(
        (
            *same_names("Bash", "Read", "Write", "Edit", "Glob", "Grep", "Skill", "Agent", "WebFetch"),
            ToolForm("Task", "Agent"),
            ToolForm("TodoWrite", "TodoWrite"),
        )
    )
    MODEL_KEYS: ClassVar[tuple[str, ...]] = ("ANTHROPIC_API_KEY",)
    AUTH_ENV: ClassVar[tuple[str, ...]] = (
        "ANTHROPIC_AUTH_TOKEN",
        "CLAUDE_CODE_OAUTH_TOKEN",
        "CLAUDE_CODE_USE_BEDROCK",
        "CLAUDE_CODE_USE_VERTEX",
    )
    type: Literal["claude-code"] = kind_field("claude-code")
    permission_mode: Literal["default", "acceptEdits", "plan", "bypassPermissions", "dontAsk"] = Field(
        default="acceptEdits", description="Claude Code's permission mode (acceptEdits, as the original)."
    )
    system_prompt_mode: Literal["append", "replace"] = Field(
        default="append", description="append: after Claude Code's own prompt; replace: instead of it."
    )
    setting_sources: list[Literal["user", "project", "local"]] = Field(
        default=["project"],
        description="Claude Code settings to load: ['project'] reads the workspace's; [] isolates the run.",
    )
    claude_settings: dict[str, Any] | str = Field(
        default_factory=dict, description="Claude Code settings: a mapping, or a JSON file (task-relative)."
    )
    sdk_options: dict[str, Any] = Field(
        default_factory=dict, description="Further claude-agent-sdk options (the harness's own refused)."
    )
    turn_timeout: float | None = Field(
        default=None, gt=0, description="Older spelling of run_limits.turn_timeout (that field wins)."
    )

    def model_keys(self) -> tuple[str, ...]:
        """Also none when ``claude_settings`` authenticates (an ``apiKeyHelper``, or a key in its ``env``)."""
        settings = self.claude_settings if isinstance(self.claude_settings, dict) else {}
        env = settings.get("env")
        env = env if isinstance(env, dict) else {}
        if "apiKeyHelper" in settings or any(name in env for name in (*self.MODEL_KEYS, *self.AUTH_ENV)):
            return ()
        return super().model_keys()

    @field_validator("sdk_options")
    @classmethod
    def _not_the_harness_options(cls, value: dict[str, Any]) -> dict[str, Any]:
        if not value:
            return value
        from claude_agent_sdk import ClaudeAgentOptions  # imported only when options are given

        known = {f.name for f in dataclasses.fields(ClaudeAgentOptions)}
        owned = sorted(set(value) & HARNESS_OPTIONS)
        unknown = sorted(set(value) - known)
        if owned:
            raise ValueError(f"{owned} are set by coder_eval itself; use the agent's own fields")
        if unknown:
            valid = sorted(known - HARNESS_OPTIONS)
            raise ValueError(f"{unknown} are not claude-agent-sdk options; valid: {valid}")
        return value
