"""What a task may set for the ``codex`` agent.

Example: ``CodexSpec(model="gpt-5.1-codex", reasoning_effort="low", disallowed_tools=["Edit"])``.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from coder_eval.agents.spec import Capabilities, CliAgentSpec, RealEndpoint, kind_field
from coder_eval.agents.vocabulary import ToolForm, Vocabulary

CODEX_MODES = {
    "bypassPermissions": "bypassPermissions",
    "acceptEdits": "bypassPermissions",
    "default": "bypassPermissions",
    "dontAsk": "bypassPermissions",
    "plan": "read-only",
    "workspace-write": "workspace-write",
    "read-only": "read-only",
}
"""Each ``permission_mode`` a task may write -> the Codex mode it runs as. ``codex exec`` has nobody to
approve anything and Codex's own sandbox cannot start inside bwrap or docker (they disable nested
user namespaces), so the original format's default / acceptEdits / dontAsk run without approvals
inside coder_eval's sandbox (as the original coder_eval ran Codex whatever the mode said); plan is
Codex's read-only sandbox."""
OWN_SANDBOX = frozenset({"workspace-write", "read-only"})
"""Codex modes that use Codex's own sandbox (bubblewrap): they run under the tempdir driver only."""


class CodexSpec(CliAgentSpec):
    """The ``codex`` agent block (common CLI fields, see ``cli_spec.py``, plus Codex's own)."""

    CAPABILITIES: ClassVar[Capabilities] = Capabilities(
        endpoint=RealEndpoint("OPENAI_BASE_URL", "https://api.openai.com", "OPENAI_API_KEY", "authorization")
    )
    TOOLS: ClassVar[Vocabulary] = Vocabulary(
        (
            ToolForm("exec_command", "Bash", {"command": "cmd"}),
            ToolForm("apply_patch", "Edit"),
            ToolForm("update_plan", "TodoWrite"),
        )
    )
    """No read, write or skill tool: it reads with shell commands and changes files with patches."""
    MODEL_KEYS: ClassVar[tuple[str, ...]] = ("OPENAI_API_KEY",)
    type: Literal["codex"] = kind_field("codex")
    permission_mode: Literal[
        "bypassPermissions", "workspace-write", "read-only", "acceptEdits", "default", "dontAsk", "plan"
    ] = Field(
        default="bypassPermissions",
        description="bypassPermissions: no approvals, no Codex sandbox (coder_eval's sandbox is the "
        "boundary); workspace-write / read-only: Codex's own sandbox (tempdir driver only); the "
        "original format's acceptEdits / default / dontAsk run as bypassPermissions, plan as read-only.",
    )

    @property
    def codex_mode(self) -> str:
        """The Codex mode ``permission_mode`` runs as (``CODEX_MODES``)."""
        return CODEX_MODES[self.permission_mode]

    reasoning_effort: Literal["minimal", "low", "medium", "high"] | None = Field(
        default=None, description="model_reasoning_effort; None keeps the model's default."
    )
