"""The OpenAI Responses API (``POST /v1/responses``), the dialect the Codex CLI speaks.

Example::

    RESPONSES.view({"input": [{"type": "message", "role": "user", "content": "hi"}], "tools": [...]})
    b"".join(RESPONSES.events(message))
    # event: response.created ... event: response.output_item.done ... event: response.completed

A request's ``input`` is a list of items: messages (``developer``, ``user``, ``assistant``), the
model's earlier ``function_call`` / ``custom_tool_call`` items and their ``*_output`` items. A run
of consecutive model items is one earlier assistant turn. Text becomes a ``message`` item, a tool
call a ``function_call`` (JSON ``arguments``) or, for a freeform tool such as ``apply_patch``, a
``custom_tool_call`` (text ``input``). Usage reports all input tokens with the prefix already seen
as ``input_tokens_details.cached_tokens`` (automatic prompt caching).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

from coder_eval.scripted.script import ErrorKind
from coder_eval.scripted.skills import listed_skills
from coder_eval.scripted.turns import RequestView, call, conversation_key, working_directory
from coder_eval.scripted.usage import serialize

MODEL_ITEMS = {"function_call", "custom_tool_call", "reasoning", "local_shell_call", "web_search_call"}
OUTPUT_ITEMS = {"function_call_output", "custom_tool_call_output", "local_shell_call_output"}
ERRORS: dict[ErrorKind, tuple[int, str, str, str]] = {
    "auth": (401, "invalid_request_error", "invalid_api_key", "Incorrect API key provided."),
    "rate_limit": (429, "rate_limit_error", "rate_limit_exceeded", "Rate limit reached for requests."),
    "server": (500, "server_error", "server_error", "The server had an error processing your request."),
    "overloaded": (503, "server_error", "server_is_overloaded", "The server is overloaded."),
}
"""Error kind -> (HTTP status, error type, error code, default message)."""


def _is_model_item(item: dict[str, Any]) -> bool:
    return item.get("type") in MODEL_ITEMS or (item.get("role") == "assistant")


def _item_text(item: dict[str, Any]) -> str:
    kind = item.get("type")
    if kind in ("function_call", "custom_tool_call"):
        return f"{item.get('name', '')} {item.get('arguments') or item.get('input') or ''}"
    if kind in OUTPUT_ITEMS:
        return _content_text(item.get("output"))
    return _content_text(item.get("content"))


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict))


def _arguments(item: dict[str, Any]) -> Any:
    if item.get("type") == "custom_tool_call":
        return {"input": item.get("input", "")}
    try:
        return json.loads(item.get("arguments") or "{}")
    except json.JSONDecodeError:
        return {"arguments": item.get("arguments")}


class Responses:
    """The Responses dialect; see the module docstring."""

    name = "responses"

    def view(self, body: dict[str, Any]) -> RequestView:
        items = [i for i in _items(body.get("input")) if isinstance(i, dict)]
        runs = [i for i, item in enumerate(items) if _is_model_item(item) and not _after_model(items, i)]
        opening = items[: runs[0]] if runs else items
        latest = items[runs[-1] :] if runs else []
        text = "\n".join([str(body.get("instructions") or ""), *(_item_text(item) for item in items)])
        return RequestView(
            tools=frozenset(str(t.get("name") or t.get("type")) for t in body.get("tools") or []),
            text=text,
            last_tool_results="\n".join(_item_text(i) for i in latest if i.get("type") in OUTPUT_ITEMS),
            assistant_count=len(runs),
            conversation=conversation_key("\n".join(_item_text(i) for i in opening)),
            calls=tuple(
                call(str(i.get("name", "")), _arguments(i))
                for i in items
                if i.get("type") in ("function_call", "custom_tool_call")
            ),
            skills=listed_skills(text),
            cwd=working_directory(text),
            model=str(body["model"]) if body.get("model") else None,
            outputs="\n".join(_item_text(i) for i in items if i.get("type") in OUTPUT_ITEMS),
        )

    def chunks(self, body: dict[str, Any]) -> list[tuple[str, bool]]:
        pieces = [*(body.get("tools") or []), body.get("instructions") or "", *_items(body.get("input"))]
        return [(serialize(piece), True) for piece in pieces]

    def streams(self, body: dict[str, Any], path: str) -> bool:
        return bool(body.get("stream"))

    def body(self, message: dict[str, Any]) -> dict[str, Any]:
        return _response(message, status="completed", output=output_items(message))

    def events(self, message: dict[str, Any]) -> Iterator[bytes]:
        sequence = 0

        def event(kind: str, **data: Any) -> bytes:
            nonlocal sequence
            sequence += 1
            payload = json.dumps({"type": kind, "sequence_number": sequence, **data})
            return f"event: {kind}\ndata: {payload}\n\n".encode()

        yield event("response.created", response=_response(message, status="in_progress", output=[]))
        items = output_items(message)
        for index, item in enumerate(items):
            yield event("response.output_item.added", output_index=index, item=_in_progress(item))
            if item["type"] == "message":
                text = item["content"][0]["text"]
                yield event(
                    "response.output_text.delta",
                    item_id=item["id"],
                    output_index=index,
                    content_index=0,
                    delta=text,
                )
            yield event("response.output_item.done", output_index=index, item=item)
        yield event("response.completed", response=_response(message, status="completed", output=items))

    def error(self, kind: ErrorKind, message: str | None) -> tuple[int, dict[str, Any]]:
        status, error_type, code, default = ERRORS[kind]
        return status, {
            "error": {"message": message or default, "type": error_type, "param": None, "code": code}
        }


def _items(value: Any) -> list[Any]:
    if isinstance(value, str):
        return [{"type": "message", "role": "user", "content": value}]
    return list(value) if isinstance(value, list) else []


def _after_model(items: list[dict[str, Any]], index: int) -> bool:
    return index > 0 and _is_model_item(items[index - 1])


def output_items(message: dict[str, Any]) -> list[dict[str, Any]]:
    """The output items of an (Anthropic-shaped) message: text as one ``message``, then the calls."""
    items: list[dict[str, Any]] = []
    text = "".join(block["text"] for block in message["content"] if block["type"] == "text")
    if text:
        content = [{"type": "output_text", "text": text, "annotations": []}]
        items.append(
            {
                "type": "message",
                "id": message["id"],
                "role": "assistant",
                "status": "completed",
                "content": content,
            }
        )
    return items + [_call_item(block) for block in message["content"] if block["type"] == "tool_use"]


def _call_item(block: dict[str, Any]) -> dict[str, Any]:
    """A ``function_call`` item, or a ``custom_tool_call`` for a freeform tool (text input)."""
    item = {"id": block["id"], "call_id": block["id"].replace("toolu_", "call_"), "name": block["name"]}
    if isinstance(block["input"], str):
        return {"type": "custom_tool_call", **item, "input": block["input"], "status": "completed"}
    return {"type": "function_call", **item, "arguments": json.dumps(block["input"]), "status": "completed"}


def _in_progress(item: dict[str, Any]) -> dict[str, Any]:
    if item["type"] == "message":
        return dict(item, status="in_progress", content=[])
    return dict(item, status="in_progress")


def _response(message: dict[str, Any], status: str, output: list[dict[str, Any]]) -> dict[str, Any]:
    usage = message["usage"]
    cached = usage["cache_read_input_tokens"]
    prompt = usage["input_tokens"] + usage["cache_creation_input_tokens"] + cached
    return {
        "id": message["id"].replace("msg_", "resp_"),
        "object": "response",
        "created_at": int(time.time()),
        "status": status,
        "model": message["model"],
        "output": output,
        "usage": {
            "input_tokens": prompt,
            "input_tokens_details": {"cached_tokens": cached},
            "output_tokens": usage["output_tokens"],
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": prompt + usage["output_tokens"],
        }
        if status == "completed"
        else None,
    }


RESPONSES = Responses()
