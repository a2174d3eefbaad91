"""What a task may set for the ``gemini`` agent.

Example: ``GeminiSpec(model="gemini-2.5-pro", disallowed_tools=["WebFetch"])``.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from coder_eval.agents.spec import CliAgentSpec, kind_field


class GeminiSpec(CliAgentSpec):
    """The ``gemini`` agent block (common CLI fields, see ``cli_spec.py``, plus Gemini CLI's own)."""

    MODEL_KEYS: ClassVar[tuple[str, ...]] = ("GEMINI_API_KEY", "GOOGLE_API_KEY")
    type: Literal["gemini"] = kind_field("gemini")
    permission_mode: Literal["bypassPermissions", "plan"] = Field(
        default="bypassPermissions",
        description="bypassPermissions: --yolo (every tool call approved); plan: --approval-mode plan.",
    )
