"""The claude-code agent end to end: the real bundled CLI against the scripted model server,
run through the public runner entry point.
"""

from __future__ import annotations

import asyncio
import json
import textwrap
import uuid
from pathlib import Path
from typing import Any

import pytest

from coder_eval.agents.claude_code.accounting import RECONCILIATION
from coder_eval.episode.plan import EpisodePlan
from coder_eval.episode.runner import run_episode
from coder_eval.scripted import ScriptedServer
from coder_eval.scripted.handler import Handler
from coder_eval.task import load_tasks
from coder_eval.trajectory import (
    CriterionResult,
    EpisodeEnd,
    Message,
    ModelCall,
    PhaseEvent,
    ToolCall,
    ToolResult,
    read_trajectory,
)
from tests.helpers import scripted_list_price

pytestmark = pytest.mark.slow

SLEEP = "python3 -c 'import time; time.sleep(300)'"
SLOW_COMMAND = f"(setsid {SLEEP} &); ({SLEEP} &); {SLEEP}"
"""A tool that blocks, with one child detached into its own session and one double-forked."""
BASH = '{{tool_use: {{name: Bash, input: {{command: "{}"}}}}}}'


def scripted_task(folder: Path, turns: str, extra: str = "", criteria: str = "") -> Path:
    """A claude-code task answered by the scripted server; ``turns`` is the YAML list of turns."""
    body = textwrap.dedent(
        """
        task_id: scripted
        initial_prompt: Do the task.
        agent: {{kind: claude-code, model: scripted, permission_mode: bypassPermissions}}
        scripted:
          model: claude-sonnet-4-5
          final_text: All done.
          turns:
        {turns}
        success_criteria:
          {criteria}
        """
    ).format(
        turns=textwrap.indent(textwrap.dedent(turns).strip(), "    "),
        criteria=criteria or "- {type: file_exists, path: ., gating: false}",
    )
    path = folder / "task.yaml"
    path.write_text(body + textwrap.dedent(extra), encoding="utf-8")
    return path


def run(task_path: Path, tmp_path: Path) -> tuple[EpisodeEnd, list[Any]]:
    task = load_tasks([task_path])[0]
    out = tmp_path / "episode.jsonl"
    end = asyncio.run(run_episode(EpisodePlan(task), "run-1", out))
    return end, read_trajectory(out).events


def is_reconciliation(event: Any) -> bool:
    return (
        isinstance(event, Message)
        and event.role == "system"
        and event.content[0].get("type") == RECONCILIATION
    )


def outputs(events: list[Any]) -> str:
    return "\n".join(e.output for e in events if isinstance(e, ToolResult))


def survivors(marker: str) -> list[int]:
    """Processes whose environment carries ``marker``."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker.encode() in (entry / "environ").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


EDIT = "{file_path: notes.txt, old_string: hello, new_string: bye}"


def test_bash_write_read_edit_are_recorded_in_order(tmp_path: Path) -> None:
    path = scripted_task(
        tmp_path,
        f"""
        - blocks: [{{text: "Looking around."}}, {BASH.format("ls -a")}]
        - blocks: [{{tool_use: {{name: Write, input: {{file_path: notes.txt, content: "hello\\n"}}}}}}]
        - blocks: [{{tool_use: {{name: Read, input: {{file_path: notes.txt}}}}}}]
        - blocks: [{{tool_use: {{name: Edit, input: {EDIT}}}}}]
        """,
        criteria="- {type: file_contains, path: notes.txt, includes: [bye]}",
    )
    end, events = run(path, tmp_path)
    assert (end.outcome, end.status) == ("pass", "completed")
    assert [e.name for e in events if isinstance(e, ToolCall)] == ["Bash", "Write", "Read", "Edit"]
    agent_part = [e for e in events if not isinstance(e, PhaseEvent | CriterionResult)][1:-1]
    # The CLI's own side requests (a title, a summary) may finish before the result, depending on
    # timing; their tokens then arrive as a reconciliation entry, which is accounting, not dialogue.
    side = [e for e in agent_part if is_reconciliation(e)]
    assert all(e.usage is not None and e.usage.input_tokens + e.usage.output_tokens > 0 for e in side)
    agent_part = [e for e in agent_part if not is_reconciliation(e) and not isinstance(e, ModelCall)]
    kinds = [e.type if not isinstance(e, Message) else f"{e.role}" for e in agent_part]
    assert kinds[:2] == ["user", "system"]
    assert kinds[2:] == ["assistant", "tool_call", "tool_result"] * 4 + ["assistant"]
    calls = [e for e in events if isinstance(e, ModelCall) and e.kind == "main"]
    asked = [b["name"] for c in calls for b in c.content if b["type"] == "tool_use"]
    assert asked == ["Bash", "Write", "Read", "Edit"]  # the endpoint's own record of what was asked
    assert end.record is not None and (end.record.source, end.record.unverified_count) == ("scripted", 0)
    results = [e for e in events if isinstance(e, ToolResult)]
    assert all(not r.is_error and r.duration_s is not None for r in results)
    assistant = [e for e in events if isinstance(e, Message) and e.role == "assistant"]
    assert all(m.usage is not None and m.usage.output_tokens > 1 for m in assistant)
    assert end.usage.output_tokens > 0 and end.usage.cache_read_tokens > 0
    assert end.cost_usd == 0.0 and (scripted_list_price(end.notes) or 0) > 0  # a scripted model is free
    assert end.num_turns == 5
    init = next(e for e in events if isinstance(e, Message) and e.role == "system")
    assert init.content[0]["claude_code_version"][0].isdigit()


def test_host_variables_neither_used_nor_visible(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, servers: list[ScriptedServer]
) -> None:
    keys: list[str | None] = []
    original = Handler.do_POST

    def do_post(handler: Handler) -> None:
        keys.append(handler.headers.get("x-api-key"))
        original(handler)

    monkeypatch.setattr(Handler, "do_POST", do_post)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "bogus-host-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", "/tmp/evil")
    end, events = run(scripted_task(tmp_path, f"- blocks: [{BASH.format('env')}]"), tmp_path)
    assert end.status == "completed"
    lines = outputs(events).splitlines()
    assert "ANTHROPIC_API_KEY=scripted-dummy-key" in lines
    assert "ANTHROPIC_BASE_URL=http://127.0.0.1:9" not in lines
    assert not any("bogus-host-key" in line or "/tmp/evil" in line for line in lines)
    assert keys and set(keys) == {"scripted-dummy-key"}
    assert servers and len(servers[0].requests) >= 2


def claude_files(marker: str) -> str:
    """A sandbox block seeding a project CLAUDE.md and a project skill that mention ``marker``."""
    skill = f"---\\nname: y\\ndescription: {marker} skill\\n---\\nSay it.\\n"
    return (
        "sandbox:\n  template_sources:\n    - starter_files:\n"
        f'        - {{path: CLAUDE.md, content: "Always say {marker}."}}\n'
        f'        - {{path: .claude/skills/y/SKILL.md, content: "{skill}"}}\n'
    )


def host_claude_home(home: Path, marker: str) -> None:
    (home / ".claude" / "skills" / "x").mkdir(parents=True)
    (home / ".claude" / "CLAUDE.md").write_text(f"Always say {marker}.\n", encoding="utf-8")
    skill = f"---\nname: x\ndescription: {marker} skill\n---\nSay {marker}.\n"
    (home / ".claude" / "skills" / "x" / "SKILL.md").write_text(skill, encoding="utf-8")


@pytest.mark.parametrize(("sources", "leaks"), [("[]", False), ("[project]", True)])
def test_setting_sources_decide_what_claude_files_reach_the_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, servers: list[ScriptedServer], sources: str, leaks: bool
) -> None:
    marker = f"MARKER-{uuid.uuid4().hex}"
    host_claude_home(tmp_path / "host-home", marker)
    monkeypatch.setenv("HOME", str(tmp_path / "host-home"))
    path = scripted_task(tmp_path, "- blocks: [{text: Hi.}]", extra=claude_files(marker))
    agent = (
        "agent: {kind: claude-code, model: scripted, permission_mode: bypassPermissions, "
        f"setting_sources: {sources}}}\n"
    )
    path.write_text(
        path.read_text().replace(
            "agent: {kind: claude-code, model: scripted, permission_mode: bypassPermissions}\n", agent
        )
    )
    end, _ = run(path, tmp_path)
    assert end.status == "completed"
    bodies = [json.dumps(r.body) for server in servers for r in server.requests]
    assert bodies and any(marker in body for body in bodies) == leaks


@pytest.mark.parametrize("kind", ["auth", "rate_limit", "server", "overloaded", "cut_stream"])
def test_model_api_errors_are_invalid_not_fail(tmp_path: Path, kind: str) -> None:
    extra = (
        "agent: {kind: claude-code, model: scripted, permission_mode: bypassPermissions, "
        "env: {CLAUDE_CODE_MAX_RETRIES: '0'}}\n"
    )
    path = scripted_task(tmp_path, f"- error: {{kind: {kind}}}", criteria="- {type: file_exists, path: x}")
    path.write_text(
        path.read_text().replace(
            "agent: {kind: claude-code, model: scripted, permission_mode: bypassPermissions}\n", extra
        )
    )
    end, events = run(path, tmp_path)
    assert (end.outcome, end.status) == ("invalid", "infra_error")
    assert end.error and "model API error" in end.error
    assert not any(e.type == "criterion" for e in events)


def test_an_auth_failure_is_not_retried_for_minutes(tmp_path: Path) -> None:
    end, _ = run(scripted_task(tmp_path, "- error: {kind: auth}"), tmp_path)
    assert (end.outcome, end.status) == ("invalid", "infra_error")
    assert end.error and "401" in end.error
    assert end.timings.agent_s < 5


def test_a_retried_error_is_not_a_failure(tmp_path: Path) -> None:
    turns = "- {error: {kind: overloaded, times: 1, retry_after: 0}, blocks: [{text: Recovered.}]}"
    end, events = run(scripted_task(tmp_path, turns), tmp_path)
    assert (end.outcome, end.status) == ("pass", "completed")
    retries = [e for e in events if isinstance(e, Message) and e.content[0].get("type") == "api_retry"]
    assert len(retries) == 1


@pytest.mark.parametrize(
    ("turn", "ended"),
    [
        ("- error: {kind: hang}", ("invalid", "infra_error")),  # not one model reply: provider unavailable
        (f"- blocks: [{BASH.format(SLOW_COMMAND)}]", ("fail", "timeout")),
    ],
)
def test_task_timeout_kills_the_cli_and_its_children(
    tmp_path: Path, turn: str, ended: tuple[str, str]
) -> None:
    marker = f"CODER_EVAL_TEST_{uuid.uuid4().hex}"
    agent = (
        "agent: {kind: claude-code, model: scripted, permission_mode: bypassPermissions, "
        f"env: {{{marker}: '1'}}}}\n"
    )
    path = scripted_task(tmp_path, turn, extra="run_limits: {task_timeout: 4}\n")
    path.write_text(
        path.read_text().replace(
            "agent: {kind: claude-code, model: scripted, permission_mode: bypassPermissions}\n", agent
        )
    )
    end, events = run(path, tmp_path)
    assert (end.outcome, end.status) == ended
    assert 4 <= end.timings.agent_s < 7
    assert survivors(marker) == []
    assert any(isinstance(e, Message) and e.role == "system" for e in events)


def test_max_turns_is_honoured(tmp_path: Path) -> None:
    turns = "\n".join(f"- blocks: [{BASH.format(f'echo {i}')}]" for i in range(4))
    end, events = run(scripted_task(tmp_path, turns, extra="run_limits: {max_turns: 2}\n"), tmp_path)
    assert end.status == "max_turns"
    assert len([e for e in events if isinstance(e, ToolCall)]) == 2


def test_token_budget_stops_the_run_while_streaming(tmp_path: Path) -> None:
    turns = "\n".join(f"- blocks: [{BASH.format(f'echo {i}')}]" for i in range(4))
    end, events = run(
        scripted_task(tmp_path, turns, extra="run_limits: {max_total_tokens: 1000}\n"), tmp_path
    )
    assert (end.outcome, end.status) == ("fail", "budget_exceeded")
    assert end.error and "max_total_tokens" in end.error
    assert len([e for e in events if isinstance(e, ToolCall)]) == 1
