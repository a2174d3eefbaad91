"""A real model's answer, as it came over the wire, read back into one Anthropic-shaped message.

Example::

    message = read_answer("anthropic", b"event: message_start\\ndata: {...}\\n\\n...", "text/event-stream")
    message["content"]   # [{"type": "text", "text": "Hi."}, {"type": "tool_use", "id": ..., ...}]
    message["usage"]     # {"input_tokens": 12, "output_tokens": 3, "cache_read_input_tokens": 0, ...}

Each dialect's complete JSON answer and its server-sent events are read: Anthropic Messages
(``message_start`` ... ``message_delta``), OpenAI Responses (the ``response.completed`` event, or
the items as they are done), Gemini (``candidates`` chunks, the last with ``usageMetadata``). Usage is
split into the Anthropic buckets (uncached input, output, cache reads, cache writes). What cannot be
read gives a message with no content and no usage, never an exception: the answer still reached the
agent, and the record says so.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any


def read_answer(dialect: str, body: bytes, content_type: str) -> dict[str, Any]:
    """The answer ``body`` (JSON, or server-sent events) of ``dialect`` as an Anthropic-shaped message."""
    events = list(sse_data(body)) if "event-stream" in content_type else [_json(body)]
    events = [e for e in events if isinstance(e, dict)]
    if dialect == "responses":
        return _responses(events)
    if dialect == "gemini":
        return _gemini(events)
    return _anthropic(events)


def sse_data(body: bytes) -> Iterator[Any]:
    """The JSON of each ``data:`` field of a server-sent event stream (``[DONE]`` and non-JSON skipped)."""
    for block in body.replace(b"\r\n", b"\n").split(b"\n\n"):
        data = b"\n".join(line[5:].lstrip() for line in block.split(b"\n") if line.startswith(b"data:"))
        if data and data != b"[DONE]":
            yield _json(data)


def _json(data: bytes) -> Any:
    try:
        return json.loads(data)
    except (ValueError, RecursionError):
        return None


def _message(model: Any, content: list[dict[str, Any]], usage: dict[str, int] | None) -> dict[str, Any]:
    return {"model": str(model) if model else None, "content": content, "usage": usage}


def _anthropic(events: list[dict[str, Any]]) -> dict[str, Any]:
    if len(events) == 1 and events[0].get("type") == "message":
        whole = events[0]
        return _message(whole.get("model"), _blocks(whole.get("content")), _usage(whole.get("usage")))
    model, usage, blocks = None, {}, {}
    for event in events:
        kind = event.get("type")
        if kind == "message_start":
            start = event.get("message") or {}
            model, usage = start.get("model"), dict(start.get("usage") or {})
        elif kind == "content_block_start":
            blocks[event.get("index")] = dict(event.get("content_block") or {}, _json_text="")
        elif kind == "content_block_delta":
            _delta(blocks.get(event.get("index")), event.get("delta") or {})
        elif kind == "message_delta":
            usage.update({k: v for k, v in (event.get("usage") or {}).items() if v is not None})
    content = [_finish(block) for _, block in sorted(blocks.items(), key=lambda kv: str(kv[0]))]
    return _message(model, _blocks(content), _usage(usage) if usage else None)


def _delta(block: dict[str, Any] | None, delta: dict[str, Any]) -> None:
    if block is None:
        return
    if delta.get("type") == "text_delta":
        block["text"] = block.get("text", "") + str(delta.get("text", ""))
    elif delta.get("type") == "input_json_delta":
        block["_json_text"] += str(delta.get("partial_json", ""))


def _finish(block: dict[str, Any]) -> dict[str, Any]:
    text = block.pop("_json_text", "")
    if block.get("type") == "tool_use" and text:
        block["input"] = _json(text.encode()) if _json(text.encode()) is not None else {"_unparsed": text}
    return block


def _blocks(content: Any) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for block in content if isinstance(content, list) else []:
        if isinstance(block, dict) and block.get("type") == "text":
            out.append({"type": "text", "text": str(block.get("text", ""))})
        elif isinstance(block, dict) and block.get("type") == "tool_use":
            out.append(
                {
                    "type": "tool_use",
                    "id": block.get("id"),
                    "name": block.get("name"),
                    "input": block.get("input"),
                }
            )
    return out


def _usage(raw: Any) -> dict[str, int] | None:
    if not isinstance(raw, dict):
        return None
    keys = ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
    return {key: _int(raw.get(key)) for key in keys}


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _responses(events: list[dict[str, Any]]) -> dict[str, Any]:
    response: dict[str, Any] = {}
    items: list[dict[str, Any]] = []
    for event in events:
        if event.get("type") in ("response.completed", "response.incomplete", "response.failed"):
            response = event.get("response") or {}
        elif event.get("type") == "response.output_item.done":
            items.append(event.get("item") or {})
        elif "output" in event and "object" in event:  # a complete (non-streaming) answer
            response = event
    output = response.get("output") or items
    content: list[dict[str, Any]] = []
    for item in output if isinstance(output, list) else []:
        content += _response_item(item) if isinstance(item, dict) else []
    raw = response.get("usage")
    usage = None
    if isinstance(raw, dict):
        cached = _int((raw.get("input_tokens_details") or {}).get("cached_tokens"))
        usage = {
            "input_tokens": max(0, _int(raw.get("input_tokens")) - cached),
            "output_tokens": _int(raw.get("output_tokens")),
            "cache_read_input_tokens": cached,
            "cache_creation_input_tokens": 0,
        }
    return _message(response.get("model"), content, usage)


def _response_item(item: dict[str, Any]) -> list[dict[str, Any]]:
    kind = item.get("type")
    if kind == "message":
        parts = item.get("content") or []
        text = "".join(str(p.get("text", "")) for p in parts if isinstance(p, dict))
        return [{"type": "text", "text": text}] if text else []
    if kind == "function_call":
        arguments = _json(str(item.get("arguments") or "{}").encode())
        return [{"type": "tool_use", "id": item.get("call_id"), "name": item.get("name"), "input": arguments}]
    if kind == "custom_tool_call":
        return [
            {
                "type": "tool_use",
                "id": item.get("call_id"),
                "name": item.get("name"),
                "input": item.get("input"),
            }
        ]
    return []


def _gemini(events: list[dict[str, Any]]) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    model, usage = None, None
    for event in events:
        model = event.get("modelVersion") or model
        for candidate in (event.get("candidates") or [])[:1]:
            for part in ((candidate or {}).get("content") or {}).get("parts") or []:
                _gemini_part(content, part)
        meta = event.get("usageMetadata")
        if isinstance(meta, dict):
            cached = _int(meta.get("cachedContentTokenCount"))
            usage = {
                "input_tokens": max(0, _int(meta.get("promptTokenCount")) - cached),
                "output_tokens": _int(meta.get("candidatesTokenCount"))
                + _int(meta.get("thoughtsTokenCount")),
                "cache_read_input_tokens": cached,
                "cache_creation_input_tokens": 0,
            }
    return _message(model, content, usage)


def _gemini_part(content: list[dict[str, Any]], part: Any) -> None:
    if not isinstance(part, dict) or part.get("thought"):
        return
    if "text" in part:
        if content and content[-1]["type"] == "text":
            content[-1]["text"] += str(part["text"])
        else:
            content.append({"type": "text", "text": str(part["text"])})
    elif isinstance(part.get("functionCall"), dict):
        call = part["functionCall"]
        content.append(
            {"type": "tool_use", "id": call.get("id"), "name": call.get("name"), "input": call.get("args")}
        )
