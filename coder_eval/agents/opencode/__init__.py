"""``opencode``: the real OpenCode CLI (npm ``opencode-ai``), see docs/agents.md.

Example (task YAML)::

    agent:
      kind: opencode
      model: scripted            # or "<provider>/<model>", with that provider's key on the host
      plugins: [.plugins/site-tools]
"""

from typing import Any

__all__ = ["OpenCodeAgent"]


def __getattr__(name: str) -> Any:  # the agent loads on use; its spec (spec.py) stays light
    if name == "OpenCodeAgent":
        from coder_eval.agents.opencode.agent import OpenCodeAgent

        return OpenCodeAgent
    raise AttributeError(name)
