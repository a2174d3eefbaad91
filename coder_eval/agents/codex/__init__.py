"""``codex``: the real Codex CLI (PyPI ``openai-codex-cli-bin``), see docs/agents.md.

Example (task YAML)::

    agent:
      kind: codex
      model: scripted            # or a real model id, with OPENAI_API_KEY set on the host
      plugins: [.plugins/site-tools]
"""

from typing import Any

__all__ = ["CodexAgent"]


def __getattr__(name: str) -> Any:  # the agent loads on use; its spec (spec.py) stays light
    if name == "CodexAgent":
        from coder_eval.agents.codex.agent import CodexAgent

        return CodexAgent
    raise AttributeError(name)
