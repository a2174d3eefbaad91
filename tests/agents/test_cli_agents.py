"""The codex, opencode and gemini agents end to end: each real CLI against the scripted model
server on 127.0.0.1, through the public runner entry point, graded by the trajectory graders.

One scripted task runs unchanged on every agent: the script names Claude Code's tools and the
server rewrites each call into the asking CLI's own tool.
"""

from __future__ import annotations

import asyncio
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from coder_eval.agents.codex.agent import codex_binary
from coder_eval.agents.gemini.agent import gemini_script
from coder_eval.agents.opencode.agent import opencode_binary
from coder_eval.episode.plan import EpisodePlan
from coder_eval.episode.runner import run_episode
from coder_eval.scripted import ScriptedServer
from coder_eval.task import load_tasks
from coder_eval.trajectory import CriterionResult, EpisodeEnd, Message, ToolCall, ToolResult, read_trajectory
from tests.helpers import scripted_list_price

pytestmark = pytest.mark.slow

MODELS = {"codex": "gpt-5.1-codex", "opencode": "claude-sonnet-4-5", "gemini": "gemini-2.5-pro"}
VERSION_KEYS = {"codex": "codex", "opencode": "opencode", "gemini": "gemini_cli"}
FOUND = {"codex": codex_binary, "opencode": opencode_binary, "gemini": gemini_script}
AGENTS = [
    pytest.param(
        kind, marks=pytest.mark.skipif(FOUND[kind]() is None, reason=f"{kind} CLI not installed: make setup")
    )
    for kind in MODELS
]
SLEEP = "python3 -c 'import time; time.sleep(300.25)'"

# python3 -B: a bytecode cache written by the first run could outlive an edit made within the same second
EDIT_AND_RUN = """
- blocks:
    - text: Let me reproduce it.
    - tool_use: {name: Bash, input: {command: "python3 -B -c 'import calc; print(calc.add(2, 3))'"}}
- blocks: [{tool_use: {name: Read, input: {file_path: calc.py}}}]
- blocks:
    - tool_use:
        name: Edit
        input: {file_path: calc.py, old_string: "return a - b  # add", new_string: "return a + b  # add"}
- blocks: [{tool_use: {name: Write, input: {file_path: notes.txt, content: "add fixed\\n"}}}]
- blocks: [{tool_use: {name: Bash, input: {command: "greet world"}}}]
- blocks:
    - tool_use: {name: Bash, input: {command: "python3 -B -c 'import calc; print(calc.add(2, 3))'"}}
- when: {last_tool_result_contains: "5"}
  blocks: [{text: "Fixed: calc.add(2, 3) returns 5."}]
"""

EDIT_CRITERIA = """
- {type: file_contains, path: calc.py, includes: ["return a + b"]}
- {type: file_contains, path: notes.txt, includes: ["add fixed"]}
- {type: tool_used, tool: Edit, min: 1}
- {type: tool_order, first: Bash, then: Edit}
- {type: command_executed, pattern: "calc\\\\.add", min_count: 2, require_success: true}
- {type: commands_efficiency, tool: Bash, expected: 4}
- {type: message_matches, pattern: "returns 5"}
- {type: recorded_calls, shim: greet, expect: [{args_regex: "^world$", exit_code: 0}]}
"""

SKILL_TURNS = """
- when: {skill_offered: sitectl}
  blocks:
    - text: Loading the sitectl skill.
    - tool_use: {name: Skill, input: {skill: sitectl}}
- when: {skill_loaded: sitectl}
  blocks:
    - tool_use: {name: Bash, input: {command: "echo draft > page.txt"}}
- blocks: [{text: "Done."}]
"""


def task_file(
    folder: Path,
    kind: str,
    turns: str,
    criteria: str,
    extra: str = "",
    *,
    task_id: str = "scripted",
    agent_options: str = "",
    sandbox_options: str = "",
) -> Path:
    """A scripted task for agent ``kind``: ``calc.py`` with a bug, ``turns`` and ``criteria`` as YAML;
    ``agent_options`` (``", permission_mode: ..."``) and ``sandbox_options`` (YAML lines, two spaces
    in) add to its agent and sandbox blocks."""
    body = textwrap.dedent(
        """
        task_id: {task_id}-{kind}
        initial_prompt: Fix calc.add and note what you did in notes.txt.
        agent: {{kind: {kind}, model: scripted{agent_options}}}
        sandbox:
        {sandbox_options}  template_sources:
            - starter_files:
                - {{path: calc.py, content: "def add(a, b):\\n    return a - b  # add\\n"}}
                - {{path: tools/greet.py, content: "#!/usr/bin/env python3\\nprint(1)\\n", executable: true}}
          shims:
            - {{name: greet, target: tools/greet.py}}
        scripted:
          model: {model}
          final_text: All done.
          turns:
        {turns}
        success_criteria:
        {criteria}
        """
    ).format(
        task_id=task_id,
        kind=kind,
        agent_options=agent_options,
        sandbox_options=sandbox_options,
        model=MODELS.get(kind, "claude-sonnet-4-5"),
        turns=textwrap.indent(textwrap.dedent(turns).strip(), "    "),
        criteria=textwrap.indent(textwrap.dedent(criteria).strip(), "  "),
    )
    path = folder / "task.yaml"
    path.write_text(body + textwrap.dedent(extra), encoding="utf-8")
    return path


def run(task_path: Path, tmp_path: Path) -> tuple[EpisodeEnd, list[Any]]:
    task = load_tasks([task_path])[0]
    out = tmp_path / "episode.jsonl"
    end = asyncio.run(run_episode(EpisodePlan(task), "run-1", out))
    return end, read_trajectory(out).events


def criteria(events: list[Any]) -> dict[str, CriterionResult]:
    return {e.kind: e for e in events if isinstance(e, CriterionResult)}


@pytest.mark.parametrize("kind", AGENTS)
def test_a_scripted_edit_and_command_pass_with_tools_tokens_and_version(kind: str, tmp_path: Path) -> None:
    end, events = run(task_file(tmp_path, kind, EDIT_AND_RUN, EDIT_CRITERIA), tmp_path)

    failed = {k: c.details for k, c in criteria(events).items() if not c.passed}
    assert (end.outcome, end.status, failed) == ("pass", "completed", {}), end.error
    calls = [e for e in events if isinstance(e, ToolCall)]
    results = {e.id: e for e in events if isinstance(e, ToolResult)}
    assert len(calls) == 6 and all(call.id in results for call in calls)
    assert "-1" in results[calls[0].id].output
    assert end.usage.output_tokens > 0 and end.usage.total > 1000
    messages = [e for e in events if isinstance(e, Message) and e.role == "assistant"]
    assert sum((m.usage.total for m in messages if m.usage), 0) == end.usage.total
    assert end.cost_usd == 0.0 and (scripted_list_price(end.notes) or 0) > 0  # a scripted model is free
    assert end.agent_versions[VERSION_KEYS[kind]] not in ("", "unknown")
    assert end.record is not None and (end.record.source, end.record.unverified) == ("scripted", [])


@pytest.mark.parametrize("kind", AGENTS)
def test_a_plugin_skill_is_offered_loaded_and_graded_triggered(kind: str, tmp_path: Path) -> None:
    plugin = tmp_path / "site-tools" / "skills" / "sitectl"
    plugin.mkdir(parents=True)
    (plugin / "SKILL.md").write_text(
        "---\nname: sitectl\ndescription: Manage the website with sitectl.\n---\nAlways use --draft.\n"
    )
    extra = f"agent: {{kind: {kind}, model: scripted, plugins: [.plugins/site-tools]}}\n"
    path = task_file(tmp_path, kind, SKILL_TURNS, "- {type: skill_triggered, skill: sitectl}")
    text = path.read_text().replace(f"agent: {{kind: {kind}, model: scripted}}\n", "")
    text = text.replace(
        "    - starter_files:",
        "    - {template_dir: site-tools, target: .plugins/site-tools}\n    - starter_files:",
    )
    path.write_text(text + textwrap.dedent(extra))

    end, events = run(path, tmp_path)

    verdict = criteria(events)["skill_triggered"]
    assert (end.outcome, verdict.observed_label) == ("pass", "sitectl"), (end.error, verdict.details)
    assert any(isinstance(e, ToolResult) and "draft" in e.output.lower() for e in events) or kind == "gemini"


@pytest.mark.parametrize("kind", AGENTS)
def test_without_the_plugin_no_skill_is_offered_or_triggered(kind: str, tmp_path: Path) -> None:
    end, events = run(
        task_file(tmp_path, kind, SKILL_TURNS, "- {type: skill_triggered, expected_skill: ''}"), tmp_path
    )

    assert end.outcome == "pass", end.error
    assert criteria(events)["skill_triggered"].observed_label == "none"


@pytest.mark.parametrize("kind", AGENTS)
def test_a_provider_error_makes_the_episode_invalid(kind: str, tmp_path: Path) -> None:
    turns = "- error: {kind: auth}"
    started = time.monotonic()
    end, _ = run(task_file(tmp_path, kind, turns, "- {type: file_exists, path: calc.py}"), tmp_path)

    assert (end.outcome, end.status) == ("invalid", "infra_error"), end.error
    assert "model API error" in (end.error or "")
    assert time.monotonic() - started < 60


@pytest.mark.parametrize("kind", AGENTS)
def test_a_hung_endpoint_ends_at_the_task_timeout_with_no_process_left(
    kind: str, tmp_path: Path, servers: list[ScriptedServer]
) -> None:
    turns = f"""
    - blocks: [{{tool_use: {{name: Bash, input: {{command: "(setsid {SLEEP} &); {SLEEP} &"}}}}}}]
    - error: {{kind: hang}}
    """
    extra = "run_limits: {task_timeout: 8}\n"
    started = time.monotonic()
    end, _ = run(task_file(tmp_path, kind, turns, "- {type: file_exists, path: calc.py}", extra), tmp_path)

    assert end.status == status_at_the_limit(servers), end.error
    assert time.monotonic() - started < 30
    assert survivors("time.sleep(300.25)") == []


def status_at_the_limit(servers: list[ScriptedServer]) -> str:
    """How a run the task timeout ended is recorded: ``model_stalled`` when the scripted model, having
    answered, was holding the latest request unanswered (the CLI sent it once its tool returned);
    else ``timeout``: the tool was still running (Gemini CLI's shell tool waits for a process it put
    in the background), or the CLI had not asked yet (a loaded machine)."""
    main = [r for server in servers for r in server.requests if r.kind == "main"]
    assert all(r.error is None for r in main[:1])  # the first turn, if asked, was answered
    return "model_stalled" if main and main[-1].error == "hang" else "timeout"


def survivors(needle: str) -> list[int]:
    """Processes whose command line holds ``needle``, given 2 s to die."""
    deadline = time.monotonic() + 2
    while True:
        found = []
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    if needle.encode() in (entry / "cmdline").read_bytes():
                        found.append(int(entry.name))
                except OSError:
                    continue
        if not found or time.monotonic() > deadline:
            return found
        time.sleep(0.1)


@pytest.mark.parametrize("kind", AGENTS)
def test_a_dead_endpoint_ends_the_run_quickly_with_the_clis_claim_kept(kind: str, tmp_path: Path) -> None:
    """The agent reports what its CLI said; the episode weighs it against the endpoint's record (a
    dead endpoint the harness itself reaches is an ``invalid`` episode: tests/episode/test_record.py)."""
    from coder_eval.agents import make_agent
    from coder_eval.agents.base import AgentRequest, ModelEndpoint
    from coder_eval.sandbox import Provision
    from coder_eval.sandbox.tempdir import TempdirSandbox
    from coder_eval.trajectory import TrajectoryWriter

    task = load_tasks(
        [task_file(tmp_path, kind, "- blocks: [{text: hi}]", "- {type: file_exists, path: x}")]
    )[0]

    async def attempt() -> Any:
        sandbox = await TempdirSandbox.create(task.sandbox, Provision(network="host"))
        try:
            with TrajectoryWriter(tmp_path / "episode.jsonl") as sink:
                request = AgentRequest(
                    task.prompt,
                    task.agent,
                    task.run_limits,
                    sandbox,
                    "e",
                    1,
                    ModelEndpoint("http://127.0.0.1:9"),
                )
                return await asyncio.wait_for(make_agent(kind).run(request, sink), 60)
        finally:
            await sandbox.close()

    started = time.monotonic()
    result = asyncio.run(attempt())

    assert (result.status, result.invalid) == ("agent_error", False), result.error
    assert result.provider_claim is not None
    assert time.monotonic() - started < 30
