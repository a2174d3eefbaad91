"""The command agent reading a CLI's JSONL event stream: the real Claude Code CLI printing
``stream-json`` against the scripted server, and a script printing ATIF steps."""

from __future__ import annotations

import asyncio
import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

from coder_eval.agents.claude_code.launcher import bundled_cli
from coder_eval.episode.plan import EpisodePlan
from coder_eval.episode.runner import run_episode
from coder_eval.task import load_tasks
from coder_eval.trajectory import CriterionResult, EpisodeEnd, ToolCall, ToolResult, read_trajectory
from tests.helpers import scripted_list_price


def run(folder: Path, body: str) -> tuple[EpisodeEnd, list[Any]]:
    path = folder / "task.yaml"
    path.write_text(textwrap.dedent(body), encoding="utf-8")
    out = folder / "episode.jsonl"
    end = asyncio.run(run_episode(EpisodePlan(load_tasks([path])[0]), "run-1", out))
    return end, read_trajectory(out).events


@pytest.mark.slow
@pytest.mark.skipif(bundled_cli() is None, reason="the Claude Code CLI is not installed")
def test_claude_stream_json_from_a_command_records_tools_and_tokens(tmp_path: Path) -> None:
    cli = bundled_cli()
    end, events = run(
        tmp_path,
        f"""
        task_id: command-stream
        initial_prompt: Write hello.
        agent:
          kind: command
          model: scripted
          events: claude-stream-json
          env: {{IS_SANDBOX: "1"}}
          command: >-
            {cli} -p {{prompt}} --output-format stream-json --verbose --model claude-sonnet-4-5
            --permission-mode bypassPermissions --setting-sources ""
        scripted:
          model: claude-sonnet-4-5
          turns:
            - blocks: [{{tool_use: {{name: Bash, input: {{command: "echo hello > hello.txt"}}}}}}]
            - blocks: [{{text: "Wrote hello.txt."}}]
        success_criteria:
          - {{type: file_contains, path: hello.txt, includes: [hello]}}
          - {{type: command_executed, pattern: "echo hello", require_success: true}}
        """,
    )

    assert (end.outcome, end.status) == ("pass", "completed"), end.error
    assert [e.name for e in events if isinstance(e, ToolCall)] == ["Bash"]
    assert end.usage.output_tokens > 0 and end.cost_usd == 0.0 and (scripted_list_price(end.notes) or 0) > 0
    assert end.num_turns == 2


ATIF_AGENT = """\
import json
steps = [
    {"step_id": 1, "source": "user", "message": "go"},
    {"step_id": 2, "source": "agent", "model_name": "gpt-5.1-codex", "message": "Listing.",
     "tool_calls": [{"tool_call_id": "c1", "function_name": "exec_command", "arguments": {"cmd": "ls -a"}}],
     "observation": {"results": [{"source_call_id": "c1", "content": ". .."}]},
     "metrics": {"prompt_tokens": 1000, "cached_tokens": 800, "completion_tokens": 20}},
    {"step_id": 3, "source": "agent", "message": "Nothing here.",
     "metrics": {"prompt_tokens": 1100, "cached_tokens": 1000, "completion_tokens": 5, "cost_usd": 0.5}},
]
for step in steps:
    print(json.dumps(step))
print("not json")
"""


def test_atif_steps_from_a_command_are_graded_like_any_agents(tmp_path: Path) -> None:
    (tmp_path / "agent.py").write_text(ATIF_AGENT)
    end, events = run(
        tmp_path,
        """
        task_id: command-atif
        initial_prompt: List the files.
        agent: {kind: command, command: "python3 agent.py", events: atif}
        sandbox:
          template_sources: [{starter_files: [{path: agent.py, source: agent.py}]}]
        success_criteria:
          - {type: command_executed, pattern: "ls -a"}
          - {type: message_matches, pattern: "Nothing here"}
        """,
    )

    verdicts = {e.kind: e.passed for e in events if isinstance(e, CriterionResult)}
    assert end.outcome == "pass" and verdicts == {"command_executed": True, "message_matches": True}
    assert [e.output for e in events if isinstance(e, ToolResult)] == [". .."]
    assert (end.usage.input_tokens, end.usage.cache_read_tokens, end.usage.output_tokens) == (300, 1800, 25)
    assert (end.num_turns, end.cost_usd) == (2, 0.5)
    assert json.loads(end.model_dump_json())["usage"]["input_tokens"] == 300
