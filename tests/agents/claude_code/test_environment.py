from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

from coder_eval.agents.base import ModelEndpoint
from coder_eval.agents.claude_code.agent import max_turns, system_prompt
from coder_eval.agents.claude_code.environment import bad_names, cli_env
from coder_eval.agents.claude_code.launcher import Launcher, kill_tree
from coder_eval.agents.claude_code.spec import ClaudeCodeSpec
from coder_eval.task.limits import RunLimits

HOST = {
    "ANTHROPIC_API_KEY": "host-key",
    "ANTHROPIC_BASE_URL": "http://proxy",
    "CLAUDE_CONFIG_DIR": "/x",
    "AWS_X": "1",
}
SANDBOX = {"HOME": "/s/home", "PATH": "/usr/bin"}


def test_scripted_runs_see_only_the_server() -> None:
    env = cli_env(SANDBOX, {"ANTHROPIC_API_KEY": "mine"}, ModelEndpoint("http://127.0.0.1:5", "dummy"), HOST)
    assert env["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:5" and env["ANTHROPIC_API_KEY"] == "dummy"
    assert "CLAUDE_CONFIG_DIR" not in env and "AWS_X" not in env
    assert env["HOME"] == "/s/home" and env["IS_SANDBOX"] == "1"


def test_real_runs_forward_only_the_anthropic_key_and_url() -> None:
    env = cli_env(SANDBOX, {"ANTHROPIC_BASE_URL": "http://mine"}, None, HOST)
    assert env["ANTHROPIC_API_KEY"] == "host-key" and env["ANTHROPIC_BASE_URL"] == "http://mine"
    assert "CLAUDE_CONFIG_DIR" not in env and "AWS_X" not in env


def test_bad_names_are_reported() -> None:
    assert bad_names({"OK_1": "", "NOT-OK": "", "1X": ""}) == ["NOT-OK", "1X"]


def test_system_prompt_modes() -> None:
    assert system_prompt(None, "append") == {"type": "preset", "preset": "claude_code"}
    assert system_prompt("Be terse.", "append") == {
        "type": "preset",
        "preset": "claude_code",
        "append": "Be terse.",
    }
    assert system_prompt("Only this.", "replace") == "Only this."


def test_max_turns_is_the_tighter_limit() -> None:
    def tighter(agent: int | None, limit: int | None) -> int | None:
        return max_turns(ClaudeCodeSpec(max_turns=agent), RunLimits(max_turns=limit))

    assert (tighter(10, 4), tighter(3, 8), tighter(None, 3), tighter(None, None)) == (4, 3, 3, None)


def test_launcher_passes_only_named_variables_and_kills_detached_children(tmp_path: Path) -> None:
    fake = tmp_path / "fake-cli"
    fake.write_text('#!/bin/bash\nenv > "$1"\n(setsid sleep 300 &)\nexec sleep 301\n')
    fake.chmod(0o755)
    with Launcher(fake, ["KEEP"], cwd=tmp_path) as launcher:
        env = {**os.environ, "KEEP": "yes", "DROP": "no", **launcher.env}
        proc = subprocess.Popen([str(launcher.path), str(tmp_path / "env.txt")], env=env)
        while not (tmp_path / "env.txt").exists() or launcher.pid is None:
            time.sleep(0.02)
        time.sleep(0.2)
        assert os.getsid(proc.pid) == proc.pid == launcher.pid
        launcher.kill()
        assert proc.wait(timeout=5) != 0
    seen = dict(line.split("=", 1) for line in (tmp_path / "env.txt").read_text().splitlines())
    assert seen["KEEP"] == "yes" and "DROP" not in seen
    assert holders(launcher.token) == []


def test_kill_tree_of_a_gone_process_is_quiet() -> None:
    kill_tree(2**22 + 7)


def holders(token: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and token.encode() in (entry / "environ").read_bytes():
                found.append(int(entry.name))
        except OSError:
            continue
    return found
