"""The model keys an agent's CLI is started with are readable by every tool it runs (``env``, its
``/proc`` entry). Where the harness's API proxy stands in front of the model, the CLI gets none of
the host's keys (the proxy holds its provider's); where it talks to its provider directly (no
proxy for that provider, or a ``docker`` sandbox on the engine's own networks), it gets its own
provider's key alone, never the others'. Here a probe takes OpenCode's place and records the
environment the harness starts it with, for a real-model episode on a host that holds every
provider's key.

The environment is built by the harness the same way whatever the driver; the probe runs under
``tempdir``, where it can write its record to the host.
"""

from __future__ import annotations

import asyncio
import textwrap
from pathlib import Path

import pytest

from coder_eval.agents.opencode.agent import OpenCodeAgent, provider_credentials
from coder_eval.agents.opencode.spec import PROVIDER_KEYS
from coder_eval.episode.plan import EpisodePlan
from coder_eval.episode.runner import run_episode
from coder_eval.task import load_tasks

TASK = """
task_id: keys
initial_prompt: Write ok.txt.
agent: {{kind: opencode, model: {model}}}
sandbox: {{driver: tempdir, network: host}}
success_criteria: [{{type: file_exists, path: ok.txt}}]
"""


def keys_seen(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, model: str) -> set[str]:
    """The provider keys holding a host secret in the environment OpenCode is started with."""
    for name in PROVIDER_KEYS.values():
        monkeypatch.setenv(name, f"host-secret-{name}")
    seen = tmp_path / "seen.env"
    probe = tmp_path / "opencode"
    probe.write_text(f"#!/bin/sh\nenv > {seen}\n")
    probe.chmod(0o755)
    monkeypatch.setattr(OpenCodeAgent, "program", lambda self: (probe, ""))
    (tmp_path / "task.yaml").write_text(textwrap.dedent(TASK.format(model=model)))
    (task,) = load_tasks([tmp_path / "task.yaml"])

    asyncio.run(run_episode(EpisodePlan(task), "red-team", tmp_path / "episode.jsonl"))

    lines = seen.read_text().splitlines()
    return {name for name, _, value in (line.partition("=") for line in lines) if "host-secret-" in value}


@pytest.mark.parametrize(
    "model",
    [
        "openai/gpt-5",
        "anthropic/claude-sonnet-4-5",
        "google/gemini-2.5-pro",
        "groq/llama-3.3-70b",  # a provider without a known key: agent.env passes it
    ],
)
def test_opencode_behind_the_proxy_gets_no_host_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, model: str
) -> None:
    assert keys_seen(tmp_path, monkeypatch, model) == set()


def test_opencode_talking_to_its_provider_directly_gets_only_that_providers_key() -> None:
    host = {name: f"host-secret-{name}" for name in PROVIDER_KEYS.values()}

    assert provider_credentials("openai/gpt-5", host) == {"OPENAI_API_KEY": "host-secret-OPENAI_API_KEY"}
    assert provider_credentials("anthropic/claude-sonnet-4-5", host).keys() == {"ANTHROPIC_API_KEY"}
    assert provider_credentials("google/gemini-2.5-pro", host).keys() == {"GEMINI_API_KEY"}
    assert provider_credentials("groq/llama-3.3-70b", host) == {}
    assert len(provider_credentials(None, host)) == 1  # no provider named: the one OpenCode will use
