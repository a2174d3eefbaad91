"""The model keys an agent's CLI is started with are readable by every tool it runs (``env``, its
``/proc`` entry), so a run against one provider must not hand the agent the host's keys of the
others. Here a probe takes OpenCode's place and records the environment the harness starts it with,
for a real-model episode on a host that holds every provider's key.

The environment is built by the harness the same way whatever the driver; the probe runs under
``tempdir``, where it can write its record to the host.
"""

from __future__ import annotations

import asyncio
import textwrap
from pathlib import Path

import pytest

from coder_eval.agents.opencode.agent import OpenCodeAgent
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
    """The provider keys in the environment OpenCode is started with, for ``model``."""
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

    names = {line.partition("=")[0] for line in seen.read_text().splitlines()}
    return names & set(PROVIDER_KEYS.values())


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        ("openai/gpt-5", {"OPENAI_API_KEY"}),
        ("anthropic/claude-sonnet-4-5", {"ANTHROPIC_API_KEY"}),
        ("google/gemini-2.5-pro", {"GEMINI_API_KEY"}),
        ("groq/llama-3.3-70b", set()),  # a provider without a known key: agent.env passes it
    ],
)
def test_opencode_gets_only_its_providers_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, model: str, expected: set[str]
) -> None:
    assert keys_seen(tmp_path, monkeypatch, model) == expected
