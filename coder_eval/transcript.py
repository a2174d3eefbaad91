"""A trajectory as a transcript a person reads top to bottom (``coder-eval show``, the explorer).

Example::

    print(transcript_text(Path("runs/latest/episodes/fix-calc-bug--default--r0.jsonl")))
    # # fix-calc-bug--default--r0 (task fix-calc-bug, variant default, repeat 0)
    #   agent claude-code, model scripted (scripted), seed 2216345042
    # [user] The `calc` package in this directory has a bug ...
    # [assistant] Let me reproduce it first.
    #   → Bash: python -c 'import calc; print(calc.add(2, 3))'
    #   ← -1
    # ...
    # = pass (completed), 3.1 s, 12034 tokens, cost $0.0421
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

from coder_eval.trajectory import (
    CliCall,
    CriterionResult,
    EpisodeEnd,
    EpisodeStart,
    Event,
    Message,
    PhaseEvent,
    ToolCall,
    ToolResult,
    read_trajectory,
)

SUMMARY_LIMIT = 200
RESULT_PREVIEW = 400
_SUMMARY_KEYS = ("command", "file_path", "notebook_path", "path", "pattern", "url", "query", "skill")


def input_summary(tool_input: dict[str, Any]) -> str:
    """A short human summary of a tool input: ``{"command": "ls -la"}`` -> ``'ls -la'``."""
    for key in _SUMMARY_KEYS:
        value = tool_input.get(key)
        if isinstance(value, str):
            return value[:SUMMARY_LIMIT]
    return json.dumps(tool_input, sort_keys=True, default=str)[:SUMMARY_LIMIT]


def _start(event: EpisodeStart) -> str:
    agent = event.agent.get("type") or event.agent.get("kind", "?")
    model = event.agent.get("model") or "default model"
    header = f"# {event.episode_id} (task {event.task_id}, variant {event.variant_id}, repeat {event.repeat})"
    kind = " (scripted)" if event.scripted else ""
    return f"{header}\n  agent {agent}, model {model}{kind}, seed {event.seed}"


def _message(event: Message) -> str:
    text = "\n".join(b.get("text", "") for b in event.content if b.get("type") == "text").strip()
    if not text and event.role == "system" and event.content:
        text = json.dumps(event.content[0], default=str)[:RESULT_PREVIEW]
    who = f"{event.role}, simulated" if event.simulated else event.role
    sub = f" (sub-agent of {event.parent_tool_use_id})" if event.parent_tool_use_id else ""
    return f"[{who}]{sub} {text}".rstrip()


def _criterion(event: CriterionResult) -> str:
    verdict = "error" if event.error else ("pass" if event.passed else "fail")
    labels = ""
    if event.expected_label is not None:
        labels = f", observed {event.observed_label!r}, expected {event.expected_label!r}"
    gating = "" if event.gating else ", informational"
    why = f": {event.error}" if event.error else ""
    kind = f"{event.kind}{gating}"
    return f"criterion {event.criterion_id} ({kind}): {verdict}, score {event.score:.2f}{labels}{why}"


def _end(event: EpisodeEnd) -> str:
    cost = "unknown" if event.cost_usd is None else f"${event.cost_usd:.4f}"
    error = f"\n  error: {event.error}" if event.error else ""
    notes = "".join(f"\n  note: {note}" for note in event.notes)
    return (
        f"= {event.outcome} ({event.status}), {event.timings.total_s:.1f} s, {event.usage.total} tokens, "
        f"{event.num_turns} turns, cost {cost}{error}{notes}"
    )


def describe(event: Event) -> str:
    """One event as transcript lines: ``describe(ToolCall(id="1", name="Bash", input={"command": "ls"}))``
    -> ``'  → Bash: ls'``."""
    if isinstance(event, EpisodeStart):
        return _start(event)
    if isinstance(event, Message):
        return _message(event)
    if isinstance(event, ToolCall):
        return f"  → {event.name}: {input_summary(event.input)}"
    if isinstance(event, ToolResult):
        flag = "error " if event.is_error else ""
        more = f" … ({event.output_chars} chars)" if event.output_chars > RESULT_PREVIEW else ""
        return f"  ← {flag}{event.output[:RESULT_PREVIEW].rstrip()}{more}"
    if isinstance(event, CliCall):
        returned = "started" if event.exit_code is None else f"exit {event.exit_code}"
        return f"  ⇢ {shlex.join(event.argv)} (recorded, {returned})"
    if isinstance(event, PhaseEvent):
        where = f" in {event.details['driver']} sandbox" if "driver" in event.details else ""
        return f"-- {event.name}{where} --"
    if isinstance(event, CriterionResult):
        return _criterion(event)
    return _end(event)


def transcript_text(path: Path) -> str:
    """A readable transcript of one trajectory, with any problem of the file noted at the end."""
    read = read_trajectory(path)
    lines = [describe(event) for event in read.events]
    return "\n".join(lines + [f"! {problem}" for problem in read.problems])
