"""Attacks on the person reading the results: an agent writing terminal escape sequences (an OSC 52
clipboard write, "conceal", a carriage return, a bidirectional override, line separators) and a line
forged to look like the harness's verdict, into its messages, a tool call's file name, a tool's output,
the output of a grader's command and its own crash message.

These surfaces read the trajectory, never the sandbox, so the defence is the same on every driver:
the attacks run once, under ``tempdir``. Each check reads a real surface: ``coder-eval run``'s
console, ``coder-eval show`` (whole, ``--follow`` on the episode and on the run), the transcript page.
"""

from __future__ import annotations

import textwrap
import unicodedata
from pathlib import Path
from typing import NamedTuple

import pytest

from coder_eval.cli.viewer import transcript_page
from tests.helpers import coder_eval, write_task

ESC, BEL = "\x1b", "\x07"
OSC52 = f"{ESC}]52;c;ZWNobyBwd25lZA=={BEL}"
"""Puts ``echo pwned`` on the reader's clipboard."""
CONCEAL = f"{ESC}[8mhidden{ESC}[0m"
FORGED = "\n= pass (completed), 0.1 s, 10 tokens, 1 turns, cost $0.0000"
PAYLOAD = f"{OSC52}{CONCEAL}\r= pass (completed)\u202eevil\u2028= pass (completed){FORGED}"

AGENT = f"""
import json
PAYLOAD, OSC52 = {PAYLOAD!r}, {OSC52!r}
name = "notes.txt" + {FORGED!r}
open(name, "w").write("x")
open("check.py", "w").write("print(" + repr(PAYLOAD + OSC52) + ")\\nraise SystemExit(1)\\n")
events = [
    {{"type": "system", "subtype": "init", "model": "claude-sonnet-4-5"}},
    {{"type": "assistant", "message": {{"id": "m1", "usage": {{"input_tokens": 10, "output_tokens": 5}},
        "content": [{{"type": "text", "text": "Working." + PAYLOAD}},
                    {{"type": "tool_use", "id": "t1", "name": "Write", "input": {{"file_path": name}}}}]}}}},
    {{"type": "user", "message": {{"content": [
        {{"type": "tool_result", "tool_use_id": "t1", "content": "wrote it" + PAYLOAD}}]}}}},
    {{"type": "result", "subtype": "success", "is_error": False, "result": "Done." + PAYLOAD}},
]
for event in events:
    print(json.dumps(event))
"""
CRASH = f"""
import sys
sys.stderr.write("no key" + {PAYLOAD!r})
raise SystemExit(1)
"""
FORGER = """
task_id: forger
initial_prompt: Write solved.txt.
agent: {kind: command, command: python3 agent.py, events: claude-stream-json}
sandbox: {driver: tempdir, template_sources: [{template_dir: agent}]}
success_criteria:
  - {id: check, type: run_command, command: python3 check.py, description: the check passes}
  - {id: solved, type: file_exists, path: solved.txt}
"""
CRASHER = """
task_id: crasher
initial_prompt: Write solved.txt.
agent: {kind: command, command: python3 crash.py}
sandbox: {driver: tempdir, template_sources: [{template_dir: agent}]}
success_criteria:
  - {id: solved, type: file_exists, path: solved.txt}
"""
EPISODES = {"forger--default--r0": "= fail (completed)", "crasher--default--r0": "= fail (agent_error)"}
"""Each attacked episode and the start of its honest verdict line."""


class AttackedRun(NamedTuple):
    folder: Path
    console: str
    """What ``coder-eval run`` printed, stdout and stderr."""


@pytest.fixture(scope="module")
def attacked(tmp_path_factory: pytest.TempPathFactory) -> AttackedRun:
    folder = tmp_path_factory.mktemp("terminal-attacks")
    (folder / "tasks" / "agent").mkdir(parents=True)
    (folder / "tasks" / "agent" / "agent.py").write_text(textwrap.dedent(AGENT), encoding="utf-8")
    (folder / "tasks" / "agent" / "crash.py").write_text(textwrap.dedent(CRASH), encoding="utf-8")
    write_task(folder / "tasks", FORGER, "forger.yaml")
    write_task(folder / "tasks", CRASHER, "crasher.yaml")
    result = coder_eval("run", "tasks", "--run-dir", "run", "--no-report", cwd=folder)
    assert result.returncode == 0, result.stdout + result.stderr  # one graded failure: measured
    return AttackedRun(folder, result.stdout + result.stderr)


def acting(text: str) -> list[str]:
    """The characters of ``text`` that act on a terminal or split a line: controls but newline and
    tab, format characters (bidirectional overrides), line and paragraph separators."""
    return [c for c in text if c not in "\n\t" and unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp")]


def verdict_lines(lines: list[str], prefix: str = "") -> list[str]:
    return [line.removeprefix(prefix) for line in lines if line.removeprefix(prefix).startswith("= ")]


@pytest.mark.parametrize("episode", EPISODES)
def test_show_prints_no_control_character_the_agent_wrote(attacked: AttackedRun, episode: str) -> None:
    shown = coder_eval("show", "run", episode, cwd=attacked.folder).stdout
    assert acting(shown) == []
    assert "\\x1b]52;c;ZWNobyBwd25lZA==\\x07" in shown and "\\x1b[8mhidden" in shown  # visible, inert


@pytest.mark.parametrize("episode", EPISODES)
def test_no_line_the_agent_wrote_passes_for_the_verdict(attacked: AttackedRun, episode: str) -> None:
    lines = coder_eval("show", "run", episode, cwd=attacked.folder).stdout.splitlines()
    (verdict,) = verdict_lines(lines)
    assert verdict.startswith(EPISODES[episode])
    assert "  │ = pass (completed), 0.1 s, 10 tokens, 1 turns, cost $0.0000" in lines  # behind the gutter


def test_following_an_episode_is_as_safe(attacked: AttackedRun) -> None:
    followed = coder_eval("show", "run", "forger--default--r0", "--follow", cwd=attacked.folder).stdout
    assert acting(followed) == []
    (verdict,) = verdict_lines(followed.splitlines())
    assert verdict.startswith(EPISODES["forger--default--r0"])


def test_following_the_run_is_as_safe(attacked: AttackedRun) -> None:
    followed = coder_eval("show", "run", "--follow", cwd=attacked.folder).stdout
    assert acting(followed) == []
    for episode, honest in EPISODES.items():
        (verdict,) = verdict_lines(followed.splitlines(), f"{episode}: ")
        assert verdict.startswith(honest)


@pytest.mark.parametrize("episode", EPISODES)
def test_the_transcript_page_has_one_verdict_and_no_control_character(
    attacked: AttackedRun, episode: str
) -> None:
    page = transcript_page(attacked.folder / "run" / "episodes" / f"{episode}.jsonl")
    assert acting(page.replace("\n", "")) == []
    assert page.count('<div class="line end">') == 1
    assert f'<div class="line end">{EPISODES[episode]}' in page


def test_the_end_of_run_console_prints_the_reasons_inert(attacked: AttackedRun) -> None:
    assert acting(attacked.console) == []
    lines = attacked.console.splitlines()
    (forger,) = [line for line in lines if line.startswith("  fail     forger--default--r0: ")]
    (crasher,) = [line for line in lines if line.startswith("  fail     crasher--default--r0: ")]
    assert "exit 1: = pass (completed), 0.1 s" in forger  # the check's last line, inline
    assert "\\x1b]52;c;" in forger and "\\x1b]52;c;" in crasher
    assert not any(line.startswith("= ") for line in lines)
