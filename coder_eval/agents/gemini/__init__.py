"""``gemini``: the real Gemini CLI (npm ``@google/gemini-cli``), see docs/agents.md.

Example (task YAML)::

    agent:
      kind: gemini
      model: scripted            # or a real model id, with GEMINI_API_KEY set on the host
      plugins: [.plugins/site-tools]
"""

from coder_eval.agents.gemini.agent import GeminiAgent

__all__ = ["GeminiAgent"]
