"""JSONL event streams a CLI may print, read into trajectory events (the ``command`` agent's
``events:`` setting).

Example::

    stream = STREAMS["claude-stream-json"](sink)
    for line in stdout.splitlines():
        stream.handle(json.loads(line))
    stream.steps.finish()
    stream.steps.usage, stream.reported_cost, stream.completed

- ``claude-stream-json``: what ``claude -p --output-format stream-json --verbose`` prints:
  ``assistant`` messages (content blocks and usage; blocks of one API message share its ``id``),
  ``user`` messages holding ``tool_result`` blocks, and a last ``result`` (``is_error``,
  ``total_cost_usd``);
- ``atif``: Agent Trajectory Interchange Format steps, one per line (or a whole trajectory with
  ``steps`` on one line): ``source: agent`` steps with ``message``, ``tool_calls``
  (``tool_call_id``, ``function_name``, ``arguments``), ``observation.results``
  (``source_call_id``, ``content``) and ``metrics`` (``prompt_tokens`` including
  ``cached_tokens``, ``completion_tokens``, ``cost_usd``).
"""

from __future__ import annotations

import json
from typing import Any

from coder_eval.agents.base import EventSink
from coder_eval.agents.events import Steps, field_of
from coder_eval.trajectory import Usage


class ClaudeStreamJson:
    """Reads Claude Code's ``stream-json`` output."""

    def __init__(self, sink: EventSink) -> None:
        self.steps = Steps(sink)
        self.completed = False
        self.errors: list[str] = []
        self.reported_cost: float | None = None
        self.version: str | None = None
        self._message_id: str | None = None
        self._usage: Usage | None = None

    def handle(self, event: dict[str, Any]) -> None:
        """Record one line of the stream."""
        kind = event.get("type")
        if kind == "system" and event.get("subtype") == "init":
            self.version = event.get("claude_code_version")
            self.steps.model = event.get("model")
        elif kind == "assistant":
            self._assistant(field_of(event, "message"))
        elif kind == "user":
            for block in field_of(event, "message").get("content") or []:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    self.steps.result(
                        str(block.get("tool_use_id")),
                        _text(block.get("content")),
                        is_error=bool(block.get("is_error")),
                    )
        elif kind == "result":
            self.steps.end_step(self._usage)
            self._usage = None
            self.completed = not event.get("is_error") and event.get("subtype") == "success"
            cost = event.get("total_cost_usd")
            self.reported_cost = float(cost) if isinstance(cost, int | float) else None
            if not self.completed:
                self.errors.append(str(event.get("result") or event.get("subtype") or "error"))

    def _assistant(self, message: dict[str, Any]) -> None:
        if message.get("id") != self._message_id:
            self.steps.end_step(self._usage)
            self._message_id = message.get("id")
        self._usage = _claude_usage(field_of(message, "usage")) or self._usage
        self.steps.model = message.get("model") or self.steps.model
        for block in message.get("content") or []:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text":
                self.steps.text(str(block.get("text") or ""))
            elif block.get("type") == "tool_use":
                self.steps.call(str(block.get("id")), str(block.get("name")), field_of(block, "input"))


class Atif:
    """Reads ATIF steps (one per line, or a whole trajectory on one line)."""

    def __init__(self, sink: EventSink) -> None:
        self.steps = Steps(sink)
        self.completed = True
        self.errors: list[str] = []
        self.reported_cost: float | None = None
        self.version: str | None = None

    def handle(self, event: dict[str, Any]) -> None:
        """Record one line: a step, or a trajectory holding ``steps``."""
        if isinstance(event.get("steps"), list):
            version = field_of(event, "agent").get("version")
            self.version = str(version) if version else self.version
            for step in event["steps"]:
                if isinstance(step, dict):
                    self.handle(step)
            return
        if event.get("source") != "agent":
            return
        self.steps.model = event.get("model_name") or self.steps.model
        if event.get("message"):
            self.steps.text(_text(event["message"]))
        for call in event.get("tool_calls") or []:
            if isinstance(call, dict):
                self.steps.call(
                    str(call.get("tool_call_id")), str(call.get("function_name")), field_of(call, "arguments")
                )
        for result in field_of(event, "observation").get("results") or []:
            if isinstance(result, dict):
                self.steps.result(str(result.get("source_call_id")), _text(result.get("content")))
        metrics = field_of(event, "metrics")
        self.steps.end_step(_atif_usage(metrics) if metrics else None)
        if isinstance(metrics.get("cost_usd"), int | float):
            self.reported_cost = (self.reported_cost or 0.0) + float(metrics["cost_usd"])


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) if isinstance(b, dict) else str(b) for b in content)
    return "" if content is None else json.dumps(content)


def _claude_usage(raw: dict[str, Any]) -> Usage | None:
    if not raw:
        return None
    return Usage(
        input_tokens=int(raw.get("input_tokens") or 0),
        output_tokens=int(raw.get("output_tokens") or 0),
        cache_read_tokens=int(raw.get("cache_read_input_tokens") or 0),
        cache_creation_tokens=int(raw.get("cache_creation_input_tokens") or 0),
    )


def _atif_usage(metrics: dict[str, Any]) -> Usage:
    cached = int(metrics.get("cached_tokens") or 0)
    return Usage(
        input_tokens=max(0, int(metrics.get("prompt_tokens") or 0) - cached),
        output_tokens=int(metrics.get("completion_tokens") or 0),
        cache_read_tokens=cached,
    )


STREAMS: dict[str, type[ClaudeStreamJson] | type[Atif]] = {
    "claude-stream-json": ClaudeStreamJson,
    "atif": Atif,
}
"""``agent.events`` value -> the reader of that stream."""
