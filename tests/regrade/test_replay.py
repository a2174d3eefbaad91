"""Record once, replay forever: a scripted episode's endpoint record replayed through the real CLI
with no key reproduces its tool calls, its grades and its outcome, event by event."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from coder_eval.errors import InputError
from coder_eval.regrade import replay_run
from coder_eval.regrade.replay import calls_of, grades_of
from coder_eval.trajectory import ModelCall, ToolCall
from tests.helpers import write_task

from .builders import greet_task, make_run, trajectories

pytestmark = pytest.mark.slow

RECORDED = """
task_id: fix-calc
initial_prompt: Fix calc.add and say what you did.
agent: {type: claude-code, model: scripted, permission_mode: bypassPermissions}
sandbox:
  template_sources:
    - starter_files:
        - {path: calc.py, content: "def add(a, b):\\n    return a - b  # add\\n"}
scripted:
  model: claude-sonnet-4-5
  turns:
    - blocks:
        - text: Let me reproduce it.
        - tool_use: {name: Bash, input: {command: "python3 -B -c 'import calc; print(calc.add(2, 3))'"}}
    - blocks: [{tool_use: {name: Read, input: {file_path: calc.py}}}]
    - error: {kind: overloaded, times: 1}
      blocks:
        - tool_use: {name: Edit, input: {file_path: calc.py, old_string: "a - b", new_string: "a + b"}}
    - blocks:
        - tool_use: {name: Bash, input: {command: "python3 -B -c 'import calc; print(calc.add(2, 3))'"}}
    - blocks: [{text: "Fixed: calc.add(2, 3) returns 5."}]
success_criteria:
  - {type: file_contains, path: calc.py, includes: ["a + b"]}
  - {type: command_executed, pattern: "calc\\\\.add", min_count: 2, require_success: true}
  - {type: tool_order, first: Bash, then: Edit}
  - {type: message_matches, pattern: "returns 5"}
"""


def test_a_replay_reproduces_the_recorded_episode_event_by_event(tmp_path: Path) -> None:
    tasks = tmp_path / "tasks"
    write_task(tasks, RECORDED)
    source = make_run(
        tmp_path / "runs",
        [tasks],
        overrides={
            "agent": {"type": "claude-code", "model": "scripted", "permission_mode": "bypassPermissions"}
        },
    )

    result = asyncio.run(replay_run(source.path, tmp_path / "runs" / "replay"))

    (recorded,), (replayed,) = trajectories(source).values(), trajectories(result.run).values()
    assert recorded.end is not None and recorded.end.outcome == "pass"
    assert calls_of(replayed.events) == calls_of(recorded.events)
    assert [c[0] for c in calls_of(replayed.events)] == ["Bash", "Read", "Edit", "Bash"]
    assert grades_of(replayed.events) == grades_of(recorded.events)
    assert replayed.end is not None and (replayed.end.outcome, replayed.end.status) == ("pass", "completed")
    statuses = [c.status for c in replayed.events if isinstance(c, ModelCall) and c.kind == "main"]
    assert statuses == [c.status for c in recorded.events if isinstance(c, ModelCall) and c.kind == "main"]
    assert 529 in statuses  # the fault the CLI met and retried, met and retried again
    assert (result.record.episodes, result.record.same, result.record.differing) == (1, 1, {})
    assert result.run.read_manifest().replayed_from == result.record
    assert all(e.id.startswith("toolu_scripted") for e in replayed.events if isinstance(e, ToolCall))


def test_episodes_without_an_endpoint_record_are_not_replayed(tmp_path: Path) -> None:
    greet_task(tmp_path / "tasks", "oracle-only", counter=tmp_path / "count")
    source = make_run(tmp_path / "runs", [tmp_path / "tasks"])
    with pytest.raises(InputError, match="no endpoint record"):
        asyncio.run(replay_run(source.path, tmp_path / "runs" / "replay"))
