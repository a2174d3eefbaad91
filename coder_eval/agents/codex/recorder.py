"""``codex exec --json`` events -> trajectory events, written as they stream.

Example::

    recorder = CodexRecorder(sink, model="gpt-5.1-codex")
    for event in events:                 # {"type": "item.completed", "item": {...}}, ...
        recorder.handle(event)
    recorder.completed, recorder.errors, recorder.steps.usage

| Codex event | trajectory |
|---|---|
| ``item.*`` ``agent_message`` | assistant text |
| ``item.started`` / ``.completed`` ``command_execution`` | ``exec_command {cmd}`` call / result |
| ``item.*`` ``file_change`` | ``apply_patch {changes: [{path, kind}]}`` call / result |
| ``item.*`` ``mcp_tool_call``, ``web_search``, ``todo_list`` | ``mcp__<server>__<tool>``, ... calls |
| ``item.completed`` ``error`` | a system message (a warning Codex reported) |
| ``turn.completed`` | the turn's usage, on its last assistant message |
| ``turn.failed``, ``error`` | kept for the outcome |

The command of a ``command_execution`` is unwrapped from Codex's ``/bin/bash -lc '<cmd>'``.
"""

from __future__ import annotations

import shlex
from typing import Any

from coder_eval.agents.base import EventSink
from coder_eval.agents.events import Steps, field_of
from coder_eval.trajectory import Message, Usage

SHELL_PREFIXES = ("/bin/bash -lc ", "bash -lc ", "/bin/sh -c ", "/bin/bash -c ")


def unwrap(command: str) -> str:
    """The command Codex ran inside its shell wrapper.

    Example: ``unwrap("/bin/bash -lc 'echo hi > out.txt'")`` -> ``"echo hi > out.txt"``.
    """
    for prefix in SHELL_PREFIXES:
        if command.startswith(prefix):
            try:
                parts = shlex.split(command[len(prefix) :])
            except ValueError:
                return command
            return parts[0] if len(parts) == 1 else command
    return command


def usage_of(raw: dict[str, Any]) -> Usage:
    """Codex's turn usage by bucket (``input_tokens`` includes the cached ones).

    Example: ``usage_of({"input_tokens": 100, "cached_input_tokens": 80, "output_tokens": 5})``
    -> ``Usage(input_tokens=20, cache_read_tokens=80, output_tokens=5)``.
    """
    cached = int(raw.get("cached_input_tokens") or 0)
    return Usage(
        input_tokens=max(0, int(raw.get("input_tokens") or 0) - cached),
        output_tokens=int(raw.get("output_tokens") or 0),
        cache_read_tokens=cached,
        cache_creation_tokens=int(raw.get("cache_write_input_tokens") or 0),
    )


class CodexRecorder:
    """Writes Codex's JSONL events to ``sink`` and keeps what the outcome needs."""

    def __init__(self, sink: EventSink, model: str | None) -> None:
        self.sink = sink
        self.steps = Steps(sink, model)
        self.completed = False
        self.errors: list[str] = []
        self.thread_id: str | None = None
        self._open: set[str] = set()

    def stderr_line(self, line: str) -> bool:
        """Its stderr is only kept for error messages."""
        return False

    def handle(self, event: dict[str, Any]) -> None:
        """Record one event of ``codex exec --json``."""
        kind = event.get("type")
        item = field_of(event, "item")
        if kind == "thread.started":
            self.thread_id = event.get("thread_id")
        elif kind in ("item.started", "item.updated"):
            self._started(item)
        elif kind == "item.completed":
            self._completed(item)
        elif kind == "turn.completed":
            self.completed = True
            self.steps.finish(usage_of(event.get("usage") or {}))
        elif kind == "turn.failed":
            self.errors.append(str((event.get("error") or {}).get("message") or "turn failed"))
            self.steps.finish()
        elif kind == "error":
            self.errors.append(str(event.get("message") or "error"))

    def _started(self, item: dict[str, Any]) -> None:
        call = _call(item)
        item_id = str(item.get("id", ""))
        if call is not None and item_id not in self._open:
            self._open.add(item_id)
            self.steps.call(item_id, *call)

    def _completed(self, item: dict[str, Any]) -> None:
        kind, item_id = item.get("type"), str(item.get("id", ""))
        if kind == "agent_message":
            self.steps.text(str(item.get("text") or ""))
        elif kind == "error":
            note = {"type": "warning", "message": str(item.get("message") or "")}
            self.sink.write(Message(role="system", content=[note]))
        elif _call(item) is not None:
            self._started(item)
            self._open.discard(item_id)
            output, failed, exit_code = _outcome(item)
            self.steps.result(item_id, output, is_error=failed, exit_code=exit_code)


def _call(item: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """(tool name, input) of an item that is a tool call, else None."""
    kind = item.get("type")
    if kind == "command_execution":
        return "exec_command", {"cmd": unwrap(str(item.get("command") or ""))}
    if kind == "file_change":
        return "apply_patch", {"changes": item.get("changes") or []}
    if kind == "mcp_tool_call":
        return f"mcp__{item.get('server')}__{item.get('tool')}", dict(item.get("arguments") or {})
    if kind == "web_search":
        return "web_search", {"query": item.get("query")}
    if kind == "todo_list":
        return "update_plan", {"items": item.get("items") or []}
    return None


def _outcome(item: dict[str, Any]) -> tuple[str, bool, int | None]:
    """(output, failed, exit code) of a finished tool item."""
    failed = item.get("status") in ("failed", "declined")
    if item.get("type") == "command_execution":
        code = item.get("exit_code")
        exit_code = int(code) if isinstance(code, int) else None
        return str(item.get("aggregated_output") or ""), failed or exit_code not in (0, None), exit_code
    if item.get("type") == "file_change":
        changes = item.get("changes") or []
        text = "\n".join(f"{c.get('kind')} {c.get('path')}" for c in changes if isinstance(c, dict))
        return text, failed, None
    result = item.get("result") or item.get("error") or ""
    return (result if isinstance(result, str) else str(result)), failed or bool(item.get("error")), None
