"""``claude-code``: the real Claude Code CLI bundled with claude-agent-sdk (see docs/claude_code.md).

Example (task YAML)::

    agent:
      type: claude-code
      model: scripted            # or a real model id, with ANTHROPIC_API_KEY set on the host
      allowed_tools: [Bash, Read, Write, Edit]
      setting_sources: []        # isolate the run from the host's Claude Code settings

The spec (``spec.py``) is light; the agent itself, which imports claude-agent-sdk, loads on use.
"""

from typing import Any

from coder_eval.lazy import without_iri_format

without_iri_format()  # before any module here imports claude-agent-sdk, which imports jsonschema: 1 s less

from coder_eval.agents.claude_code.spec import ClaudeCodeSpec  # noqa: E402

__all__ = ["ClaudeCodeAgent", "ClaudeCodeSpec"]


def __getattr__(name: str) -> Any:
    if name == "ClaudeCodeAgent":
        from coder_eval.agents.claude_code.agent import ClaudeCodeAgent

        return ClaudeCodeAgent
    raise AttributeError(name)
