"""Which host key the OpenCode CLI is started with, for a real model: its provider's alone."""

from __future__ import annotations

from coder_eval.agents.opencode.agent import provider_credentials

HOST = {"ANTHROPIC_API_KEY": "a", "OPENAI_API_KEY": "o", "GEMINI_API_KEY": "g", "PATH": "/usr/bin"}


def test_a_named_provider_gets_its_own_key_and_no_other() -> None:
    assert provider_credentials("openai/gpt-5", HOST) == {"OPENAI_API_KEY": "o"}
    assert provider_credentials("openrouter/x", HOST) == {}  # its key is not set on this host
    assert provider_credentials("mistral/large", HOST) == {}  # no key name known: agent.env passes it


def test_a_model_without_a_provider_gets_the_one_key_opencode_will_use() -> None:
    assert provider_credentials("gpt-5", HOST) == {"ANTHROPIC_API_KEY": "a"}
    assert provider_credentials(None, {"GEMINI_API_KEY": "g", "OPENAI_API_KEY": ""}) == {
        "GEMINI_API_KEY": "g"
    }
    assert provider_credentials(None, {}) == {}
