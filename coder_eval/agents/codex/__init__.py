"""``codex``: the real Codex CLI (PyPI ``openai-codex-cli-bin``), see docs/agents.md.

Example (task YAML)::

    agent:
      kind: codex
      model: scripted            # or a real model id, with OPENAI_API_KEY set on the host
      plugins: [.plugins/site-tools]
"""

from coder_eval.agents.codex.agent import CodexAgent

__all__ = ["CodexAgent"]
