"""The Claude Code session seam (``run_cli``): the real bundled CLI against the scripted model server,
started, streamed, stopped and killed the same way for the agent and the judge."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk import ClaudeAgentOptions

from coder_eval.agents.base import ModelEndpoint
from coder_eval.agents.claude_code.session import (
    Progress,
    SessionEnd,
    find_cli,
    run_cli,
    session_env,
)
from coder_eval.errors import AgentError
from coder_eval.sandbox import Provision, TempdirSandbox, TempdirSpec
from coder_eval.scripted import ScriptedServer
from coder_eval.trajectory import Event, Message, ToolCall, ToolResult
from tests.agents.test_claude_code import survivors
from tests.helpers import REPO

pytestmark = pytest.mark.slow


class Events:
    def __init__(self) -> None:
        self.events: list[Event] = []

    def write(self, event: Message | ToolCall | ToolResult) -> None:
        self.events.append(event)


def bash(command: str) -> dict[str, Any]:
    return {"blocks": [{"tool_use": {"name": "Bash", "input": {"command": command}}}]}


def session(
    tmp_path: Path, script: dict[str, Any], **options: Any
) -> tuple[SessionEnd, Events, TempdirSandbox]:
    cli = find_cli()
    assert cli is not None, "claude-agent-sdk bundles the CLI"
    sink = Events()

    async def go() -> tuple[SessionEnd, TempdirSandbox]:
        sandbox = await TempdirSandbox.create(TempdirSpec(), Provision(), base_dir=tmp_path)
        with ScriptedServer({"model": "claude-sonnet-4-5", "final_text": "Done.", **script}) as server:
            endpoint = ModelEndpoint(server.base_url, model="claude-sonnet-4-5")
            env = session_env(sandbox.env, {"MARK": options.pop("mark", "none")}, endpoint)

            def options_for(env: dict[str, str], cli_path: Path) -> ClaudeAgentOptions:
                return ClaudeAgentOptions(
                    cwd=sandbox.workdir,
                    env=env,
                    cli_path=str(cli_path),
                    model="claude-sonnet-4-5",
                    permission_mode="bypassPermissions",
                    setting_sources=[],
                    include_partial_messages=True,
                )

            end = await run_cli(cli, sandbox, env, sink, "Do the task.", options_for, **options)
        return end, sandbox

    end, sandbox = asyncio.run(go())
    return end, sink, sandbox


def test_a_run_streams_every_event_and_ends_at_the_cli_result(tmp_path: Path) -> None:
    end, sink, sandbox = session(tmp_path, {"turns": [bash("echo made > made.txt")]})

    assert end.result.status == "completed", end.result.error
    assert not end.timed_out and not end.hopeless
    assert end.model == "claude-sonnet-4-5" and end.version
    assert (Path(sandbox.workdir) / "made.txt").read_text() == "made\n"
    calls = [event for event in sink.events if isinstance(event, ToolCall)]
    assert [call.name for call in calls] == ["Bash"]
    assert end.result.usage.output_tokens > 0 and end.result.num_turns >= 2


def test_a_watch_that_names_a_reason_stops_the_run_there(tmp_path: Path) -> None:
    seen: list[int] = []

    def watch(message: Any, progress: Progress) -> str | None:
        seen.append(progress.usage.output_tokens)
        return "enough tokens" if progress.usage.output_tokens > 0 else None

    turns = [bash(f"echo {n} >> turns.txt") for n in range(5)]
    end, _, sandbox = session(tmp_path, {"turns": turns}, watch=watch)

    assert end.result.status == "budget_exceeded" and end.result.error == "enough tokens"
    assert seen and seen[0] == 0
    written = Path(sandbox.workdir) / "turns.txt"
    done = written.read_text().split() if written.exists() else []
    assert len(done) < 5, "the run went on after the watch stopped it"


STOPPED_AT_EXIT = """
from pathlib import Path
from tests.agents.claude_code.test_session import bash, session

def watch(message, progress):
    return "enough tokens" if progress.usage.output_tokens > 0 else None

turns = [bash(f"echo {n} >> turns.txt") for n in range(5)]
end, _, _ = session(Path(TMP), {"turns": turns}, watch=watch)
print(end.result.status)
"""


def test_a_stopped_run_leaves_no_pipe_open_for_the_exit_to_trip_on(tmp_path: Path) -> None:
    code = STOPPED_AT_EXIT.replace("TMP", repr(str(tmp_path)))

    done = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120, check=False
    )

    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["budget_exceeded"]
    # a pipe the SDK's reader left open is closed by the garbage collector at exit, on a closed loop
    assert "Exception ignored" not in done.stderr, done.stderr


def test_silence_longer_than_the_turn_timeout_ends_the_run_as_a_failure(tmp_path: Path) -> None:
    end, _, _ = session(tmp_path, {"turns": [{"error": {"kind": "hang"}}]}, turn_timeout=3)

    assert not end.timed_out
    assert end.result.status != "completed"
    assert "no message from the CLI for 3 s (turn_timeout)" in (end.result.error or "")


def test_the_timeout_kills_the_cli_and_everything_it_started(tmp_path: Path) -> None:
    mark = uuid.uuid4().hex
    sleeper = "python3 -c 'import time; time.sleep(300)'"
    end, _, _ = session(tmp_path, {"turns": [bash(f"({sleeper} &); {sleeper}")]}, timeout=8, mark=mark)

    assert end.timed_out
    assert end.result.status != "completed"
    assert survivors(mark) == []


def test_an_invalid_variable_name_is_refused_before_anything_starts() -> None:
    with pytest.raises(AgentError, match="invalid variable names"):
        session_env({}, {"NOT A NAME": "1"}, None)
