"""What a task may set for the ``gemini`` agent.

Example: ``GeminiSpec(model="gemini-2.5-pro", disallowed_tools=["WebFetch"])``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from coder_eval.agents.cli_spec import CliAgentSpec


class GeminiSpec(CliAgentSpec):
    """The ``gemini`` agent block (common CLI fields, see ``cli_spec.py``, plus Gemini CLI's own)."""

    type: Literal["gemini"] = Field(default="gemini", description="The agent kind.")
    permission_mode: Literal["bypassPermissions", "plan"] = Field(
        default="bypassPermissions",
        description="bypassPermissions: --yolo (every tool call approved); plan: --approval-mode plan.",
    )
