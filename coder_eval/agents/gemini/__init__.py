"""``gemini``: the real Gemini CLI (npm ``@google/gemini-cli``), see docs/agents.md.

Example (task YAML)::

    agent:
      kind: gemini
      model: scripted            # or a real model id, with GEMINI_API_KEY set on the host
      plugins: [.plugins/site-tools]
"""

from typing import Any

__all__ = ["GeminiAgent"]


def __getattr__(name: str) -> Any:  # the agent loads on use; its spec (spec.py) stays light
    if name == "GeminiAgent":
        from coder_eval.agents.gemini.agent import GeminiAgent

        return GeminiAgent
    raise AttributeError(name)
