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
    # criterion hidden-tests (hidden_tests): fail, score 0.50
    #     checks: the hidden unit tests pass
    #     exit_code: 1
    #     output: FF..
    #   │ ...
    # = fail (completed), 3.1 s, 12034 tokens, cost $0.0421

Only the harness starts a line. What the agent wrote (messages, commands, tool output, file names,
test output a criterion recorded) is made inert (``coder_eval.terminal.inert``) and each of its
further lines is printed behind the gutter ``  │ ``, so a file name holding a newline and
``= pass (completed)`` cannot pass for the verdict line. A criterion that did not pass is followed by
what it checks and what it recorded (``coder_eval.failures.evidence``).
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

from coder_eval.failures import evidence
from coder_eval.terminal import inert
from coder_eval.trajectory import (
    CliCall,
    CriterionResult,
    EpisodeEnd,
    EpisodeStart,
    Event,
    Message,
    ModelCall,
    PhaseEvent,
    ToolCall,
    ToolResult,
    read_trajectory,
)

SUMMARY_LIMIT = 200
RESULT_PREVIEW = 400
GUTTER = "  │ "
"""Where every further line of agent text starts: only the harness starts a line anywhere else."""
_SUMMARY_KEYS = ("command", "file_path", "notebook_path", "path", "pattern", "url", "query", "skill")


def input_summary(tool_input: dict[str, Any]) -> str:
    """A short human summary of a tool input: ``{"command": "ls -la"}`` -> ``'ls -la'``."""
    for key in _SUMMARY_KEYS:
        value = tool_input.get(key)
        if isinstance(value, str):
            return value[:SUMMARY_LIMIT]
    return json.dumps(tool_input, sort_keys=True, default=str)[:SUMMARY_LIMIT]


def _flat(text: object) -> str:
    """A field that stays on its line (an id, a tool name): inert, a newline shown as ``\\n``."""
    return inert(str(text)).replace("\n", "\\n")


def block(head: str, text: str) -> list[str]:
    """``head`` (the harness's words) then agent ``text``: its first line on the head's line, each
    further line behind :data:`GUTTER`, all of it inert.

    Example: ``block("  ← ", "a\\n= pass")`` -> ``["  ← a", "  │ = pass"]``.
    """
    first, *rest = inert(text).split("\n")
    return [head + first, *(GUTTER + line for line in rest)]


def _start(event: EpisodeStart) -> list[str]:
    agent = _flat(event.agent.get("type") or event.agent.get("kind", "?"))
    model = _flat(event.agent.get("model") or "default model")
    header = (
        f"# {_flat(event.episode_id)} (task {_flat(event.task_id)}, variant {_flat(event.variant_id)}, "
        f"repeat {event.repeat})"
    )
    kind = " (scripted)" if event.scripted else ""
    return [header, f"  agent {agent}, model {model}{kind}, seed {event.seed}"]


def _message(event: Message) -> list[str]:
    text = "\n".join(b.get("text", "") for b in event.content if b.get("type") == "text").strip()
    if not text and event.role == "system" and event.content:
        text = json.dumps(event.content[0], default=str)[:RESULT_PREVIEW]
    who = f"{event.role}, simulated" if event.simulated else event.role
    sub = f" (sub-agent of {_flat(event.parent_tool_use_id)})" if event.parent_tool_use_id else ""
    lines = block(f"[{who}]{sub} ", text)
    return [lines[0].rstrip(), *lines[1:]]


def _criterion(event: CriterionResult) -> list[str]:
    """The verdict line; for a criterion that did not pass, what it checks and what it recorded."""
    verdict = "error" if event.error else ("pass" if event.passed else "fail")
    labels = ""
    if event.expected_label is not None:
        labels = (
            f", observed {_flat(repr(event.observed_label))}, expected {_flat(repr(event.expected_label))}"
        )
    gating = "" if event.gating else ", informational"
    kind = f"{_flat(event.kind)}{gating}"
    head = f"criterion {_flat(event.criterion_id)} ({kind}): {verdict}, score {event.score:.2f}{labels}"
    if event.passed and not event.error:
        return [head]
    return [head, *(line for name, value in evidence(event) for line in block(f"    {_flat(name)}: ", value))]


def _end(event: EpisodeEnd) -> list[str]:
    cost = "unknown" if event.cost_usd is None else f"${event.cost_usd:.4f}"
    verdict = (
        f"= {event.outcome} ({event.status}), {event.timings.total_s:.1f} s, {event.usage.total} tokens, "
        f"{event.num_turns} turns, cost {cost}"
    )
    error = block("  error: ", event.error) if event.error else []
    return [verdict, *error, *(line for note in event.notes for line in block("  note: ", note))]


def _tool_result(event: ToolResult) -> list[str]:
    flag = "error " if event.is_error else ""
    more = f" … ({event.output_chars} chars)" if event.output_chars > RESULT_PREVIEW else ""
    lines = block(f"  ← {flag}", event.output[:RESULT_PREVIEW].rstrip())
    return [*lines[:-1], lines[-1] + more]


def _lines(event: Event) -> list[str]:
    if isinstance(event, EpisodeStart):
        return _start(event)
    if isinstance(event, Message):
        return _message(event)
    if isinstance(event, ToolCall):
        return block(f"  → {_flat(event.name)}: ", input_summary(event.input))
    if isinstance(event, ToolResult):
        return _tool_result(event)
    if isinstance(event, CliCall):
        returned = "started" if event.exit_code is None else f"exit {event.exit_code}"
        lines = block("  ⇢ ", shlex.join(event.argv))
        return [*lines[:-1], f"{lines[-1]} (recorded, {returned})"]
    if isinstance(event, PhaseEvent):
        where = f" in {_flat(event.details['driver'])} sandbox" if "driver" in event.details else ""
        return [f"-- {_flat(event.name)}{where} --"]
    if isinstance(event, CriterionResult):
        return _criterion(event)
    if isinstance(event, ModelCall):
        answer = "no answer" if event.status is None else f"HTTP {event.status}"
        uses = sum(1 for b in event.content if b.get("type") == "tool_use")
        return [f"  ⇄ model request {event.seq} ({_flat(event.kind)}): {answer}, {uses} tool use(s)"]
    return _end(event)


def describe(event: Event) -> str:
    """One event as transcript lines: ``describe(ToolCall(id="1", name="Bash", input={"command": "ls"}))``
    -> ``'  → Bash: ls'``. Only the harness starts a line; what the agent wrote is inert and each of
    its further lines sits behind :data:`GUTTER`, so no agent text passes for a verdict."""
    return "\n".join(_lines(event))


def transcript_text(path: Path) -> str:
    """A readable transcript of one trajectory, with any problem of the file noted at the end."""
    read = read_trajectory(path)
    lines = [describe(event) for event in read.events]
    return "\n".join(lines + [f"! {_flat(problem)}" for problem in read.problems])
