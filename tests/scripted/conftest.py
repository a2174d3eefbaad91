"""Builders shared by the scripted-server tests: request bodies, clients, the bundled CLI."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anthropic
import claude_agent_sdk
import pytest

from coder_eval.scripted import ScriptedServer

MODEL = "claude-scripted-test"
CLI = Path(claude_agent_sdk.__file__).parent / "_bundled" / "claude"


def tool(name: str) -> dict[str, Any]:
    """A minimal tool definition."""
    return {"name": name, "description": f"The {name} tool.", "input_schema": {"type": "object"}}


def body(
    assistant_turns: int = 0,
    tools: tuple[str, ...] = ("Bash",),
    system: str = "You are a test.",
    last_user: Any = "go",
    first_user: str = "Please do the task.",
) -> dict[str, Any]:
    """A Messages request with ``assistant_turns`` earlier assistant messages."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": first_user}]
    for i in range(assistant_turns):
        messages.append({"role": "assistant", "content": [{"type": "text", "text": f"step {i}"}]})
        messages.append({"role": "user", "content": last_user if i == assistant_turns - 1 else "ok"})
    return {
        "model": MODEL,
        "max_tokens": 100,
        "system": system,
        "tools": [tool(name) for name in tools],
        "messages": messages,
    }


def client(server: ScriptedServer, **options: Any) -> anthropic.Anthropic:
    """A real anthropic client aimed at ``server`` (no retries unless asked)."""
    return anthropic.Anthropic(base_url=server.base_url, api_key="scripted", **{"max_retries": 0, **options})


@pytest.fixture
def serve() -> Iterator[Any]:
    """``serve(script, seed=...)`` starts a server that is stopped after the test."""
    servers: list[ScriptedServer] = []

    def start(script: Any, seed: int = 0, **options: Any) -> ScriptedServer:
        server = ScriptedServer(script, seed=seed, **options).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


@dataclass(frozen=True)
class CliRun:
    """What one run of the bundled CLI produced."""

    returncode: int
    result: dict[str, Any]
    stderr: str


def run_claude(server: ScriptedServer, tmp_path: Path, prompt: str, *args: str, **env: str) -> CliRun:
    """Run the bundled Claude Code CLI in print mode against ``server``, in a scratch HOME and cwd."""
    home, cwd = tmp_path / "home", tmp_path / "work"
    home.mkdir(exist_ok=True)
    cwd.mkdir(exist_ok=True)
    command = [str(CLI), "-p", prompt, "--output-format", "stream-json", "--verbose", "--model", MODEL]
    command += ["--permission-mode", "bypassPermissions", "--setting-sources", "", *args]
    full_env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "IS_SANDBOX": "1", **server.client_env(), **env}
    done = subprocess.run(command, cwd=cwd, env=full_env, capture_output=True, text=True, timeout=60)
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    results = [event for event in events if event.get("type") == "result"]
    return CliRun(done.returncode, results[-1] if results else {}, done.stderr)
