"""What a task may set for the ``opencode`` agent.

Example: ``OpenCodeSpec(model="anthropic/claude-sonnet-4-5", disallowed_tools=["WebFetch"])``.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from coder_eval.agents.spec import Capabilities, CliAgentSpec, RealEndpoint, kind_field
from coder_eval.agents.vocabulary import ToolForm, Vocabulary

PROVIDER_KEYS = {
    "anthropic": "ANTHROPIC_API_KEY",
    "openai": "OPENAI_API_KEY",
    "google": "GEMINI_API_KEY",
    "openrouter": "OPENROUTER_API_KEY",
}
"""The host variable each ``<provider>/`` of a model id needs."""


class OpenCodeSpec(CliAgentSpec):
    """The ``opencode`` agent block (common CLI fields, see ``cli_spec.py``, plus OpenCode's own)."""

    CAPABILITIES: ClassVar[Capabilities] = Capabilities(
        endpoint=RealEndpoint(
            "ANTHROPIC_BASE_URL", "https://api.anthropic.com", "ANTHROPIC_API_KEY", "x-api-key"
        )
    )
    TOOLS: ClassVar[Vocabulary] = Vocabulary(
        (
            ToolForm("bash", "Bash"),
            ToolForm("read", "Read", {"file_path": "filePath"}),
            ToolForm("write", "Write", {"file_path": "filePath"}),
            ToolForm(
                "edit",
                "Edit",
                {
                    "file_path": "filePath",
                    "old_string": "oldString",
                    "new_string": "newString",
                    "replace_all": "replaceAll",
                },
            ),
            ToolForm("glob", "Glob"),
            ToolForm("grep", "Grep"),
            ToolForm("skill", "Skill", {"skill": "name"}),
            ToolForm("task", "Agent"),
            ToolForm("webfetch", "WebFetch"),
            ToolForm("todowrite", "TodoWrite"),
        ),
        absolute_paths=True,
    )
    MODEL_KEYS: ClassVar[tuple[str, ...]] = tuple(PROVIDER_KEYS.values())
    type: Literal["opencode"] = kind_field("opencode")
    permission_mode: Literal["bypassPermissions", "plan", "acceptEdits", "default", "dontAsk"] = Field(
        default="bypassPermissions",
        description="bypassPermissions: every tool allowed; plan: edits and shell commands denied; "
        "acceptEdits: shell commands denied unless Bash is in allowed_tools; default / dontAsk: edits "
        "and shell commands denied unless allowed_tools lists them (run mode answers no prompt).",
    )
    agent: str | None = Field(default=None, description="OpenCode agent to run (--agent); None: build.")
    variant: str | None = Field(
        default=None, description="Model variant (--variant: the provider's reasoning effort, e.g. high)."
    )
    pure: bool = Field(default=True, description="Run without external plugins (--pure).")
    require_token_telemetry: bool = Field(
        default=False, description="An episode whose CLI reported no token counts is invalid (not measured)."
    )

    def model_keys(self) -> tuple[str, ...]:
        """The key of the model id's provider (``anthropic/claude-sonnet-4-5``: ANTHROPIC_API_KEY)."""
        keys = super().model_keys()
        provider = (self.model or "").partition("/")[0]
        return (PROVIDER_KEYS[provider],) if keys and provider in PROVIDER_KEYS else keys
