"""``opencode``: the real OpenCode CLI (npm ``opencode-ai``), see docs/agents.md.

Example (task YAML)::

    agent:
      kind: opencode
      model: scripted            # or "<provider>/<model>", with that provider's key on the host
      plugins: [.plugins/site-tools]
"""

from coder_eval.agents.opencode.agent import OpenCodeAgent

__all__ = ["OpenCodeAgent"]
