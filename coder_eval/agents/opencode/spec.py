"""What a task may set for the ``opencode`` agent.

Example: ``OpenCodeSpec(model="anthropic/claude-sonnet-4-5", disallowed_tools=["WebFetch"])``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from coder_eval.agents.cli_spec import CliAgentSpec


class OpenCodeSpec(CliAgentSpec):
    """The ``opencode`` agent block (common CLI fields, see ``cli_spec.py``, plus OpenCode's own)."""

    type: Literal["opencode"] = Field(default="opencode", description="The agent kind.")
    permission_mode: Literal["bypassPermissions", "plan"] = Field(
        default="bypassPermissions",
        description="bypassPermissions: every tool allowed; plan: edits and shell commands denied.",
    )
    agent: str | None = Field(default=None, description="OpenCode agent to run (--agent); None: build.")
