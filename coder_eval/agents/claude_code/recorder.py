"""claude-agent-sdk messages -> trajectory events, written as they stream.

Example::

    recorder = Recorder(sink)
    async for message in query(prompt=prompt, options=options):
        recorder.handle(message)
    recorder.flush_all()
    recorder.results      # every ResultMessage, in order
    recorder.hopeless     # the CLI is retrying an error no retry can fix (401, 403)

An API message reaches the SDK as one ``AssistantMessage`` per content block (sharing a
``message_id``), each carrying the usage known when the block started. With partial messages on,
the raw ``message_start`` / ``message_delta`` / ``message_stop`` stream events give the final usage,
so the blocks are gathered and written as **one** ``message`` event at ``message_stop``, followed by
its ``tool_call`` events. Sub-agent messages arrive without stream events; they are written when
their conversation moves on, with the usage the CLI reported for them, and a sub-agent's final
message (which the CLI does not stream) from its ``Agent`` call's result. At each turn's result a
reconciliation entry makes the messages sum to the turn's totals (``accounting.py``).
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from claude_agent_sdk import (
    AssistantMessage,
    ResultMessage,
    StreamEvent,
    SystemMessage,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)

from coder_eval.agents.base import EventSink
from coder_eval.agents.claude_code.accounting import TurnLedger, subagent_final
from coder_eval.trajectory import TOOL_OUTPUT_LIMIT, Message, ToolCall, ToolResult, Usage, now

SYSTEM_KEYS = (
    "claude_code_version",
    "model",
    "cwd",
    "permissionMode",
    "tools",
    "skills",
    "plugins",
    "agents",
    "mcp_servers",
    "apiKeySource",
)
"""What of the CLI's ``init`` message is kept (the tools and skills it offered, its version)."""

RECORDED_SYSTEM = {"init", "api_retry", "compact_boundary"}
"""System messages written to the trajectory; progress and status chatter is not."""

HOPELESS_STATUS = {401, 403}
"""HTTP statuses the CLI retries although no retry can succeed (a wrong or missing key)."""


def usage_of(raw: dict[str, Any] | None) -> Usage | None:
    """API usage (``cache_read_input_tokens`` ...) as a :class:`Usage`.

    Example: ``usage_of({"input_tokens": 3, "cache_read_input_tokens": 9})``
    -> ``Usage(input_tokens=3, cache_read_tokens=9)``.
    """
    if not raw:
        return None
    return Usage(
        input_tokens=int(raw.get("input_tokens") or 0),
        output_tokens=int(raw.get("output_tokens") or 0),
        cache_read_tokens=int(raw.get("cache_read_input_tokens") or 0),
        cache_creation_tokens=int(raw.get("cache_creation_input_tokens") or 0),
    )


def block_dict(block: Any) -> dict[str, Any]:
    """An SDK content block as the API's JSON.

    Example: ``block_dict(TextBlock("hi"))`` -> ``{"type": "text", "text": "hi"}``.
    """
    kind = {
        "TextBlock": "text",
        "ThinkingBlock": "thinking",
        "ToolUseBlock": "tool_use",
        "ToolResultBlock": "tool_result",
        "ServerToolUseBlock": "server_tool_use",
        "ServerToolResultBlock": "server_tool_result",
    }.get(type(block).__name__, type(block).__name__)
    is_instance = dataclasses.is_dataclass(block) and not isinstance(block, type)
    body = dataclasses.asdict(block) if is_instance else {"value": repr(block)}
    return {"type": kind, **body}


def result_text(content: str | list[dict[str, Any]] | None) -> str:
    """A tool result's content as text; non-text parts become a placeholder like ``[image]``."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    parts = [
        item.get("text", "") if item.get("type") == "text" else f"[{item.get('type')}]" for item in content
    ]
    return "\n".join(parts)


@dataclass
class _Pending:
    """An assistant message being gathered from its blocks."""

    message_id: str | None
    model: str
    parent: str | None
    usage: Usage | None
    seen: datetime = field(default_factory=now)
    content: list[dict[str, Any]] = field(default_factory=list)
    calls: list[ToolCall] = field(default_factory=list)
    held: list[tuple[UserMessage, float]] = field(default_factory=list)
    """Tool results that came back before the message's stream ended, with when they arrived."""


class Recorder:
    """Writes each SDK message to ``sink`` as trajectory events and keeps what the outcome needs."""

    def __init__(self, sink: EventSink) -> None:
        self.sink = sink
        self.results: list[ResultMessage] = []
        self.api_errors: list[str] = []
        self.hopeless = False
        self.version: str | None = None
        self.model: str | None = None
        self.usage = Usage()
        self.turns = 0
        self.ledger = TurnLedger()
        self._pending: dict[str | None, _Pending] = {}
        self._sub_texts: dict[str, list[str]] = {}
        self._stream_usage: dict[str | None, dict[str, Any]] = {}
        self._started: dict[str, float] = {}

    def handle(self, message: Any) -> None:
        """Record one message from ``claude_agent_sdk.query``."""
        if isinstance(message, StreamEvent):
            self._stream_event(message.event, message.parent_tool_use_id)
        elif isinstance(message, AssistantMessage):
            self._assistant(message)
        elif isinstance(message, UserMessage):
            self._user(message)
        elif isinstance(message, SystemMessage):
            self._system(message)
        elif isinstance(message, ResultMessage):
            self.flush_all()
            self.results.append(message)
            entry = self.ledger.reconcile(message.model_usage)
            if entry is not None:
                self.sink.write(entry)

    def flush_all(self) -> None:
        """Write every message still being gathered (end of run, timeout, crash)."""
        for parent in list(self._pending):
            self._flush(parent)

    def _stream_event(self, event: dict[str, Any], parent: str | None) -> None:
        kind = event.get("type")
        if kind == "message_start":
            self._stream_usage[parent] = dict(event.get("message", {}).get("usage") or {})
        elif kind == "message_delta":
            known = {k: v for k, v in (event.get("usage") or {}).items() if v is not None}
            self._stream_usage.setdefault(parent, {}).update(known)
        elif kind == "message_stop":
            pending = self._pending.get(parent)
            if pending is not None and parent in self._stream_usage:
                pending.usage = usage_of(self._stream_usage.pop(parent))
            self._flush(parent)

    def _assistant(self, message: AssistantMessage) -> None:
        parent = message.parent_tool_use_id
        pending = self._pending.get(parent)
        if pending is not None and pending.message_id != message.message_id:
            self._flush(parent)
            pending = None
        if pending is None:
            pending = _Pending(message.message_id, message.model, parent, usage_of(message.usage))
            self._pending[parent] = pending
        if message.error is not None:
            text = " ".join(b.text for b in message.content if isinstance(b, TextBlock))
            self.api_errors.append(f"{message.error}: {text}".strip())
        for block in message.content:
            pending.content.append(block_dict(block))
            if isinstance(block, ToolUseBlock):
                self._started[block.id] = time.monotonic()
                pending.calls.append(
                    ToolCall(id=block.id, name=block.name, input=block.input, parent_tool_use_id=parent)
                )

    def _user(self, message: UserMessage, arrived: float | None = None) -> None:
        parent = message.parent_tool_use_id
        pending = self._pending.get(parent)
        if pending is not None and parent in self._stream_usage:
            # The CLI runs a tool as soon as its block is complete, so a quick tool's result can arrive
            # before the message's final usage (message_delta): it waits for the message to end.
            pending.held.append((message, time.monotonic()))
            return
        self._flush(parent)
        content = message.content
        if isinstance(content, str):
            self.sink.write(
                Message(role="user", content=[{"type": "text", "text": content}], parent_tool_use_id=parent)
            )
            return
        others = [block_dict(b) for b in content if not isinstance(b, ToolResultBlock)]
        if others:
            self.sink.write(Message(role="user", content=others, parent_tool_use_id=parent))
        results = [b for b in content if isinstance(b, ToolResultBlock)]
        if len(results) == 1 and isinstance(message.tool_use_result, dict):  # a string for some errors
            self._subagent_final(results[0].tool_use_id, message.tool_use_result)
        for block in results:
            self.sink.write(self._tool_result(block, arrived))

    def _subagent_final(self, call_id: str, result: dict[str, Any]) -> None:
        """The final message of the sub-agent ``call_id`` ran, unless it was already written."""
        self._flush(call_id)
        final = subagent_final(result, call_id, usage_of(result.get("usage")))
        if final is None:
            return
        text = "".join(str(b.get("text", "")) for b in final.content)
        if text and text in self._sub_texts.get(call_id, []):
            return
        self._write_assistant(final)

    def _tool_result(self, block: ToolResultBlock, arrived: float | None = None) -> ToolResult:
        text = result_text(block.content)
        started = self._started.pop(block.tool_use_id, None)
        ended = time.monotonic() if arrived is None else arrived
        return ToolResult(
            id=block.tool_use_id,
            output=text[:TOOL_OUTPUT_LIMIT],
            output_chars=len(text),
            is_error=bool(block.is_error),
            duration_s=None if started is None else round(ended - started, 4),
        )

    def _system(self, message: SystemMessage) -> None:
        if message.subtype == "init":
            self.version = message.data.get("claude_code_version")
            self.model = message.data.get("model")
        if message.subtype == "api_retry" and message.data.get("error_status") in HOPELESS_STATUS:
            self.api_errors.append(f"{message.data.get('error')} (HTTP {message.data['error_status']})")
            self.hopeless = True
        if message.subtype not in RECORDED_SYSTEM:
            return
        keys = (
            SYSTEM_KEYS if message.subtype == "init" else message.data.keys() - {"uuid", "session_id", "type"}
        )
        body = {key: message.data[key] for key in keys if key in message.data}
        self.sink.write(Message(role="system", content=[{"type": message.subtype, **body}]))

    def _flush(self, parent: str | None) -> None:
        pending = self._pending.pop(parent, None)
        if pending is None:
            return
        if parent is None and pending.model != "<synthetic>":
            self.turns += 1
        message = Message(
            ts=pending.seen,
            role="assistant",
            content=pending.content,
            model=pending.model,
            usage=pending.usage,
            parent_tool_use_id=parent,
        )
        self._write_assistant(message)
        for call in pending.calls:
            self.sink.write(call)
        for held, arrived in pending.held:
            self._user(held, arrived)

    def _write_assistant(self, message: Message) -> None:
        if message.usage is not None:
            self.usage = self.usage + message.usage
        self.ledger.record(message.usage)
        parent = message.parent_tool_use_id
        if parent is not None:
            text = "".join(str(b.get("text", "")) for b in message.content if b.get("type") == "text")
            self._sub_texts.setdefault(parent, []).append(text)
        self.sink.write(message)
