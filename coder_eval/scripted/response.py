"""Anthropic Messages API wire shapes: a message, its server-sent events, an error body.

Example::

    message = build_message([Block(text="Hi.")], model="claude-sonnet-4-5", ids=IdCounter(), usage=u)
    for event, data in stream_events(message):
        ...   # ("message_start", {...}), ("ping", ...), ("content_block_start", ...), ...
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Iterator, Sequence
from typing import Any

from coder_eval.scripted.calls import native_call
from coder_eval.scripted.script import Block, ErrorKind
from coder_eval.scripted.turns import RequestView

HTTP_ERRORS: dict[ErrorKind, tuple[int, str, str]] = {
    "auth": (401, "authentication_error", "invalid x-api-key"),
    "rate_limit": (429, "rate_limit_error", "Number of request tokens has exceeded your rate limit."),
    "server": (500, "api_error", "Internal server error"),
    "overloaded": (529, "overloaded_error", "Overloaded"),
}
"""Error kinds answered with an HTTP status: kind -> (status, error type, default message)."""

DELTA_CHARS = 40
"""Text and tool-input JSON are streamed in deltas of at most this many characters."""


class IdCounter:
    """Unique ``msg_...`` / ``toolu_...`` ids (Claude Code merges assistant messages sharing an id)."""

    def __init__(self) -> None:
        self._next = itertools.count(1)
        self._lock = threading.Lock()

    def new(self, prefix: str) -> str:
        """Example: ``IdCounter().new("msg") == "msg_scripted_000001"``."""
        with self._lock:
            return f"{prefix}_scripted_{next(self._next):06d}"


def content_of(
    blocks: Sequence[Block], ids: IdCounter, view: RequestView | None = None
) -> list[dict[str, Any]]:
    """API content blocks for scripted blocks, each tool call with a fresh id and in the form of the
    CLI that sent ``view`` (``calls.py``); a freeform tool's ``input`` is a string."""
    out: list[dict[str, Any]] = []
    for block in blocks:
        if block.tool_use is not None:
            tool = block.tool_use
            call = native_call(tool, view) if view is not None else None
            name, tool_input = (call.name, call.input) if call is not None else (tool.name, tool.input)
            out.append({"type": "tool_use", "id": ids.new("toolu"), "name": name, "input": tool_input})
        else:
            out.append({"type": "text", "text": block.text or ""})
    return out


def build_message(
    content: list[dict[str, Any]], model: str, message_id: str, usage: dict[str, int]
) -> dict[str, Any]:
    """A complete ``message`` object; ``stop_reason`` is ``tool_use`` when it calls a tool."""
    calls_tool = any(block["type"] == "tool_use" for block in content)
    return {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": "tool_use" if calls_tool else "end_turn",
        "stop_sequence": None,
        "usage": usage,
    }


def stream_events(message: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """The SSE events that stream ``message``, as (event name, data) pairs."""
    start_usage = dict(message["usage"], output_tokens=1)
    yield (
        "message_start",
        {
            "type": "message_start",
            "message": dict(message, content=[], stop_reason=None, usage=start_usage),
        },
    )
    yield "ping", {"type": "ping"}
    for index, block in enumerate(message["content"]):
        yield from _block_events(index, block)
    yield (
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
            "usage": {"output_tokens": message["usage"]["output_tokens"]},
        },
    )
    yield "message_stop", {"type": "message_stop"}


def _block_events(index: int, block: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    if block["type"] == "tool_use":
        empty = dict(block, input={})
        payload, delta_type, key = json.dumps(block["input"]), "input_json_delta", "partial_json"
    else:
        empty = dict(block, text="")
        payload, delta_type, key = block["text"], "text_delta", "text"
    yield "content_block_start", {"type": "content_block_start", "index": index, "content_block": empty}
    for i in range(0, len(payload), DELTA_CHARS):
        delta = {"type": delta_type, key: payload[i : i + DELTA_CHARS]}
        yield "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
    yield "content_block_stop", {"type": "content_block_stop", "index": index}


def sse(event: str, data: dict[str, Any]) -> bytes:
    """One server-sent event. Example: ``sse("ping", {"type": "ping"})``."""
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


def error_body(error_type: str, message: str) -> dict[str, Any]:
    """The API's error JSON. Example: ``error_body("overloaded_error", "Overloaded")``."""
    return {"type": "error", "error": {"type": error_type, "message": message}}
