"""``gemini -o stream-json`` events -> trajectory events, written as they stream.

Example::

    recorder = GeminiRecorder(sink, model="gemini-2.5-pro")
    for event in events:                 # {"type": "tool_use", "tool_name": ..., ...}, ...
        recorder.handle(event)
    recorder.completed, recorder.errors, recorder.steps.usage

| Gemini CLI event | trajectory |
|---|---|
| ``message`` (``role: assistant``, streamed as deltas) | assistant text |
| ``tool_use`` (``tool_name``, ``tool_id``, ``parameters``) | ``tool_call`` |
| ``tool_result`` (``tool_id``, ``status``, ``output``, ``error``) | ``tool_result`` |
| ``error`` | a system message (a warning the CLI reported) |
| ``result`` (``status``, ``stats`` with tokens) | the run's usage, on its last message; the outcome |

Gemini CLI reports tokens for the whole run only (``stats``: ``input`` uncached, ``cached``,
``output_tokens``), so they go on the last assistant message.
"""

from __future__ import annotations

from typing import Any

from coder_eval.agents.base import EventSink
from coder_eval.agents.events import Steps, field_of
from coder_eval.trajectory import Message, Usage


def usage_of(stats: dict[str, Any]) -> Usage:
    """The run's token counts by bucket.

    Example: ``usage_of({"input": 12, "cached": 600, "output_tokens": 40})``
    -> ``Usage(input_tokens=12, cache_read_tokens=600, output_tokens=40)``.
    """
    cached = int(stats.get("cached") or 0)
    uncached = stats.get("input")
    if uncached is None:
        uncached = max(0, int(stats.get("input_tokens") or 0) - cached)
    return Usage(
        input_tokens=int(uncached),
        output_tokens=int(stats.get("output_tokens") or 0),
        cache_read_tokens=cached,
    )


class GeminiRecorder:
    """Writes Gemini CLI's JSONL events to ``sink`` and keeps what the outcome needs."""

    def __init__(self, sink: EventSink, model: str | None) -> None:
        self.sink = sink
        self.steps = Steps(sink, model)
        self.completed = False
        self.errors: list[str] = []
        self.session_id: str | None = None

    def stderr_line(self, line: str) -> bool:
        """Its stderr is only kept for error messages."""
        return False

    def handle(self, event: dict[str, Any]) -> None:
        """Record one event of ``gemini -o stream-json``."""
        kind = event.get("type")
        if kind == "init":
            self.session_id = event.get("session_id")
        elif kind == "message" and event.get("role") == "assistant":
            self.steps.text(str(event.get("content") or ""), append=bool(event.get("delta")))
        elif kind == "tool_use":
            parameters = field_of(event, "parameters")
            self.steps.call(str(event.get("tool_id") or ""), str(event.get("tool_name") or ""), parameters)
        elif kind == "tool_result":
            self._result(event)
        elif kind == "error":
            note = {"type": "warning", "message": str(event.get("message") or "")}
            self.sink.write(Message(role="system", content=[note]))
        elif kind == "result":
            self._end(event)

    def _result(self, event: dict[str, Any]) -> None:
        error = event.get("error")
        output = event.get("output")
        if isinstance(error, dict) and not output:
            output = error.get("message")
        failed = event.get("status") != "success"
        self.steps.result(str(event.get("tool_id") or ""), str(output or ""), is_error=failed)

    def _end(self, event: dict[str, Any]) -> None:
        stats = field_of(event, "stats")
        self.steps.finish(usage_of(stats) if stats else None)
        self.completed = event.get("status") == "success"
        error = event.get("error")
        if not self.completed:
            message = error.get("message") if isinstance(error, dict) else error
            self.errors.append(str(message or "the run ended with an error"))
