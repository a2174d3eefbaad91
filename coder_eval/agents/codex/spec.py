"""What a task may set for the ``codex`` agent.

Example: ``CodexSpec(model="gpt-5.1-codex", reasoning_effort="low", disallowed_tools=["Edit"])``.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from coder_eval.agents.spec import CliAgentSpec, kind_field


class CodexSpec(CliAgentSpec):
    """The ``codex`` agent block (common CLI fields, see ``cli_spec.py``, plus Codex's own)."""

    MODEL_KEYS: ClassVar[tuple[str, ...]] = ("OPENAI_API_KEY",)
    type: Literal["codex"] = kind_field("codex")
    permission_mode: Literal["bypassPermissions", "workspace-write", "read-only"] = Field(
        default="bypassPermissions",
        description="bypassPermissions: no approvals, no Codex sandbox (coder_eval's sandbox is the "
        "boundary); workspace-write / read-only: Codex's own sandbox (needs bubblewrap).",
    )
    reasoning_effort: Literal["minimal", "low", "medium", "high"] | None = Field(
        default=None, description="model_reasoning_effort; None keeps the model's default."
    )
