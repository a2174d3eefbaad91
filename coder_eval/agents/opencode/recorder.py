"""``opencode run --format json`` events -> trajectory events, written as they stream.

Example::

    recorder = OpenCodeRecorder(sink, model="claude-sonnet-4-5")
    for event in events:                 # {"type": "tool_use", "part": {...}}, ...
        recorder.handle(event)
    recorder.completed, recorder.errors, recorder.steps.usage

| OpenCode event | trajectory |
|---|---|
| ``text`` | assistant text |
| ``tool_use`` (``part.tool``, ``callID``, ``state.input``/``output``) | ``tool_call``, ``tool_result`` |
| ``step_finish`` (``tokens {input, output, reasoning, cache {read, write}}``) | one message's end, usage |
| ``error`` | kept for the outcome |
| a ``stream error`` on stderr (``--print-logs``) | kept; no endpoint or a refused key stops the run |

A run is complete when a step finishes for another reason than calling tools (``stop``).
"""

from __future__ import annotations

import re
from typing import Any

from coder_eval.agents.base import EventSink
from coder_eval.agents.events import Steps, field_of
from coder_eval.trajectory import Usage

STREAM_ERROR = re.compile(r'error\.error="([^"]*)"')
HOPELESS = ("Cannot connect to API", "Unable to connect", "401", "403", "invalid x-api-key", "authentication")
"""Stream errors no retry fixes: the endpoint is unreachable or refuses the key."""


def usage_of(tokens: dict[str, Any]) -> Usage:
    """A step's token counts by bucket (reasoning tokens are output tokens).

    Example: ``usage_of({"input": 3, "output": 9, "reasoning": 1, "cache": {"read": 700, "write": 5}})``
    -> ``Usage(input_tokens=3, output_tokens=10, cache_read_tokens=700, cache_creation_tokens=5)``.
    """
    cache = tokens.get("cache") or {}
    return Usage(
        input_tokens=int(tokens.get("input") or 0),
        output_tokens=int(tokens.get("output") or 0) + int(tokens.get("reasoning") or 0),
        cache_read_tokens=int(cache.get("read") or 0),
        cache_creation_tokens=int(cache.get("write") or 0),
    )


def error_text(error: Any) -> str:
    """The message of OpenCode's error object (``{name, data: {message, statusCode}}``)."""
    if not isinstance(error, dict):
        return str(error)
    data = field_of(error, "data")
    status = f" (HTTP {data['statusCode']})" if data.get("statusCode") else ""
    return f"{error.get('name', 'error')}: {data.get('message') or error.get('message') or ''}{status}"


class OpenCodeRecorder:
    """Writes OpenCode's JSONL events to ``sink`` and keeps what the outcome needs."""

    def __init__(self, sink: EventSink, model: str | None) -> None:
        self.steps = Steps(sink, model)
        self.completed = False
        self.errors: list[str] = []
        self.session_id: str | None = None

    def stderr_line(self, line: str) -> bool:
        """A ``stream error`` log line (``--print-logs``): OpenCode retries a failed model call for
        about a minute with nothing on stdout; an endpoint that cannot be reached or refuses the key
        will not recover, so the run is stopped at the first such error."""
        if 'message="stream error"' not in line:
            return False
        found = STREAM_ERROR.search(line)
        self.errors.append(found.group(1) if found else line[-300:])
        return any(marker in line for marker in HOPELESS)

    def handle(self, event: dict[str, Any]) -> None:
        """Record one event of ``opencode run --format json``."""
        kind = event.get("type")
        part = field_of(event, "part")
        self.session_id = self.session_id or event.get("sessionID")
        if kind == "text":
            self.steps.text(str(part.get("text") or ""))
        elif kind == "tool_use":
            self._tool(part)
        elif kind == "step_finish":
            self.steps.end_step(usage_of(part.get("tokens") or {}))
            self.completed = part.get("reason") not in ("tool-calls", "error", None)
        elif kind == "error":
            self.errors.append(error_text(event.get("error")))
            self.completed = False

    def _tool(self, part: dict[str, Any]) -> None:
        state = field_of(part, "state")
        call_id = str(part.get("callID") or part.get("id") or "")
        tool_input = field_of(state, "input")
        self.steps.call(call_id, str(part.get("tool") or ""), tool_input)
        if state.get("status") == "error":
            self.steps.result(call_id, str(state.get("error") or ""), is_error=True)
            return
        metadata = field_of(state, "metadata")
        code = metadata.get("exit")
        exit_code = int(code) if isinstance(code, int) else None
        self.steps.result(
            call_id, str(state.get("output") or ""), is_error=exit_code not in (None, 0), exit_code=exit_code
        )
