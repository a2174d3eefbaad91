"""``claude-code``: the real Claude Code CLI bundled with claude-agent-sdk (see docs/claude_code.md).

Example (task YAML)::

    agent:
      kind: claude-code
      model: scripted            # or a real model id, with ANTHROPIC_API_KEY set on the host
      allowed_tools: [Bash, Read, Write, Edit]
      setting_sources: []        # isolate the run from the host's Claude Code settings
"""

from coder_eval.agents.claude_code.agent import ClaudeCodeAgent

__all__ = ["ClaudeCodeAgent"]
