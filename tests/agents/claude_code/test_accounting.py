"""Token accounting with the real Claude Code CLI (scripted): a sub-agent's final generation is a
message, and each turn's messages sum exactly to the turn's totals."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from coder_eval.agents.claude_code.accounting import TurnLedger, model_usage_total
from coder_eval.episode.plan import EpisodePlan
from coder_eval.episode.runner import run_episode
from coder_eval.task import load_tasks
from coder_eval.trajectory import Message, Usage, read_trajectory
from tests.helpers import write_task

pytestmark = pytest.mark.slow

DELEGATE = """
task_id: delegate
initial_prompt: Delegate the count.
agent: {type: claude-code, model: scripted, permission_mode: bypassPermissions}
scripted:
  turns:
    - blocks:
        - tool_use:
            name: Agent
            input:
              description: count
              prompt: Count files
              subagent_type: general-purpose
              run_in_background: false
    - when: {last_tool_result_contains: sub-done}
      blocks: [{text: Main done.}]
  subagent_turns:
    - blocks: [{tool_use: {name: Bash, input: {command: ls}}}]
    - blocks: [{text: sub-done}]
success_criteria:
  - {type: message_matches, pattern: Main done}
"""


def test_a_sub_agent_run_leaves_no_token_unaccounted(tmp_path: Path) -> None:
    (task,) = load_tasks([write_task(tmp_path, DELEGATE)])

    end = asyncio.run(run_episode(EpisodePlan(task), "r", tmp_path / "e.jsonl"))

    messages = [e for e in read_trajectory(tmp_path / "e.jsonl").events if isinstance(e, Message)]
    sub = [m for m in messages if m.parent_tool_use_id is not None and m.role == "assistant"]
    assert end.outcome == "pass", end.error
    assert [b.get("text") for b in sub[-1].content if b.get("text") == "sub-done"] == ["sub-done"]
    assert sub[-1].usage is not None and sub[-1].usage.cache_read_tokens > 0
    assert sum((m.usage for m in messages if m.usage), Usage()) == end.usage  # exactly, every bucket
    entries = [
        m for m in messages if m.role == "system" and m.content[0].get("type") == "usage_reconciliation"
    ]
    assert len(entries) <= 1 and all(e.content[0]["turn"] == 1 for e in entries)


def test_model_usage_total_sums_every_model() -> None:
    counts = {"inputTokens": 1, "outputTokens": 2, "cacheReadInputTokens": 3, "cacheCreationInputTokens": 4}
    assert model_usage_total({"a": counts, "b": counts}) == Usage(
        input_tokens=2, output_tokens=4, cache_read_tokens=6, cache_creation_tokens=8
    )
    assert model_usage_total(None) is None


def test_a_turn_total_below_its_messages_is_refused_never_reconciled_downward() -> None:
    ledger = TurnLedger()
    ledger.record(Usage(input_tokens=900, output_tokens=40))
    forged = {"claude-sonnet-4-5": {"inputTokens": 1, "outputTokens": 1}}
    entry = ledger.reconcile(forged)
    assert entry is not None and entry.usage == Usage()  # nothing negative is written
    assert entry.content[0]["refused"] == Usage(input_tokens=899, output_tokens=39).model_dump()
