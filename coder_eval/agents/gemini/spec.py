"""What a task may set for the ``gemini`` agent.

Example: ``GeminiSpec(model="gemini-2.5-pro", disallowed_tools=["WebFetch"])``.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from coder_eval.agents.spec import Capabilities, CliAgentSpec, RealEndpoint, kind_field
from coder_eval.agents.vocabulary import ToolForm, Vocabulary


class GeminiSpec(CliAgentSpec):
    """The ``gemini`` agent block (common CLI fields, see ``cli_spec.py``, plus Gemini CLI's own)."""

    CAPABILITIES: ClassVar[Capabilities] = Capabilities(
        endpoint=RealEndpoint(
            "GOOGLE_GEMINI_BASE_URL",
            "https://generativelanguage.googleapis.com",
            "GEMINI_API_KEY",
            "x-goog-api-key",
        )
    )
    TOOLS: ClassVar[Vocabulary] = Vocabulary(
        (
            ToolForm("run_shell_command", "Bash"),
            ToolForm("read_file", "Read"),
            ToolForm("write_file", "Write"),
            ToolForm(
                "replace",
                "Edit",
                {"replace_all": "allow_multiple"},
                required={"instruction": "Replace the given text in {file_path}."},
            ),
            ToolForm("glob", "Glob", {"path": "dir_path"}),
            ToolForm("grep_search", "Grep", {"path": "dir_path", "glob": "include_pattern"}),
            ToolForm("list_directory", "LS", {"path": "dir_path"}),
            ToolForm("activate_skill", "Skill", {"skill": "name"}),
            ToolForm("invoke_agent", "Agent", {"subagent_type": "agent_name"}),
            ToolForm("web_fetch", "WebFetch"),
            ToolForm("write_todos", "TodoWrite"),
        ),
        absolute_paths=True,
    )
    MODEL_KEYS: ClassVar[tuple[str, ...]] = ("GEMINI_API_KEY", "GOOGLE_API_KEY")
    type: Literal["gemini"] = kind_field("gemini")
    permission_mode: Literal["bypassPermissions", "plan"] = Field(
        default="bypassPermissions",
        description="bypassPermissions: --yolo (every tool call approved); plan: --approval-mode plan.",
    )
