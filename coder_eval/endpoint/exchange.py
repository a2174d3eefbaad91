"""One model request and its answer as a ``model_call`` event, whichever harness point saw it.

Example::

    call = scripted_call(server.requests[3], seq=3)            # the scripted server's own log
    call = proxied_call(Exchange("anthropic", "/v1/messages", body, 200, message), seq=0)
    call.content      # [{"type": "tool_use", "id": "toolu_01", "name": "Bash", "input": {...}}]
    call.tool_results # what the CLI sent back in this request: [ToolReturn(id="toolu_00", ...)]

What a request carries back (its tool results) is read from its last user turn, in each wire
dialect's own shape: Anthropic ``tool_result`` blocks, Responses ``*_output`` items after the last
model item, Gemini ``functionResponse`` parts. Tool-use ids are kept as the CLI saw them on the
wire (a Responses call's ``call_id``; Gemini calls have none).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from coder_eval.pricing import cost_usd, rates_for
from coder_eval.scripted.dialect import dialect_for
from coder_eval.scripted.request_log import RecordedRequest
from coder_eval.trajectory import TOOL_OUTPUT_LIMIT, ModelCall, ToolReturn, Usage

NO_ANSWER = {"hang": "the answer stalled and the connection was closed", "cut_stream": "the answer was cut"}
"""Scripted faults after which the client has no answer (the status line said 200)."""


@dataclass(frozen=True)
class Exchange:
    """A request as the harness's API proxy passed it on, and the answer it got (parsed: ``wire.py``)."""

    dialect: str
    path: str
    body: Any
    status: int | None
    message: dict[str, Any] | None = None
    error: str | None = None
    requested_at: float = 0.0
    duration_s: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def scripted_call(request: RecordedRequest, seq: int) -> ModelCall:
    """The ``model_call`` of one request the scripted server answered."""
    dialect = request.dialect or ("anthropic" if request.path == "/v1/messages" else "other")
    status: int | None = request.status
    error = None
    if request.error in NO_ANSWER:
        status, error = None, f"{request.error}: {NO_ANSWER[request.error]}"
    elif request.error is not None:
        error = request.error
    message = request.answer if status == 200 else None
    return _call(
        "scripted",
        seq,
        Exchange(dialect, request.path, request.body, status, message, error, request.ts),
        kind=request.kind,
        position=request.position,
    )


def proxied_call(exchange: Exchange, seq: int) -> ModelCall:
    """The ``model_call`` of one request the API proxy passed to a real model."""
    return _call("proxy", seq, exchange, kind=request_kind(exchange.path, exchange.body))


def request_kind(path: str, body: Any) -> str:
    """``main``, ``subagent``, ``auxiliary`` (no tools offered), ``count_tokens`` or ``other``.

    Example: ``request_kind("/v1/messages", {"tools": [{"name": "Bash"}], "messages": []})`` -> ``"main"``.
    """
    if path.endswith("count_tokens") or path.endswith(":countTokens"):
        return "count_tokens"
    dialect = dialect_for(path)
    if dialect is None or not isinstance(body, dict):
        return "other"
    view = dialect.view(body)
    if view.subagent:
        return "subagent"
    return "main" if view.tools else "auxiliary"


def _call(
    source: Literal["scripted", "proxy"], seq: int, exchange: Exchange, kind: str, position: int | None = None
) -> ModelCall:
    """``position``: the request's place in its conversation when the server already read it
    (otherwise it is read from the body here)."""
    body = exchange.body if isinstance(exchange.body, dict) else {}
    dialect = dialect_for(exchange.path)
    if position is None and dialect is not None and body:
        position = dialect.view(body).assistant_count
    message = exchange.message
    usage = served_usage(message)
    model = str(message.get("model")) if message and message.get("model") else None
    return ModelCall(
        seq=seq,
        source=source,
        dialect=exchange.dialect,
        path=exchange.path,
        kind=kind,
        position=position,
        status=exchange.status,
        error=exchange.error,
        model=model,
        content=wire_content(exchange.dialect, message),
        tool_results=tool_returns(exchange.dialect, body),
        usage=usage,
        cost_usd=cost_usd(model, usage) if usage is not None and model and rates_for(model) else None,
        requested_at=datetime.fromtimestamp(exchange.requested_at or 0, UTC),
        duration_s=exchange.duration_s,
    )


def served_usage(message: dict[str, Any] | None) -> Usage | None:
    """The usage of an Anthropic-shaped message, by bucket."""
    raw = message.get("usage") if message else None
    if not isinstance(raw, dict):
        return None
    return Usage(
        input_tokens=_count(raw.get("input_tokens")),
        output_tokens=_count(raw.get("output_tokens")),
        cache_read_tokens=_count(raw.get("cache_read_input_tokens")),
        cache_creation_tokens=_count(raw.get("cache_creation_input_tokens")),
    )


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def wire_content(dialect: str, message: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The answer's text and tool_use blocks, each tool-use id as the CLI saw it on ``dialect``."""
    blocks = message.get("content") if message else None
    out: list[dict[str, Any]] = []
    for block in blocks if isinstance(blocks, list) else []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text":
            out.append({"type": "text", "text": str(block.get("text", ""))})
        elif block.get("type") == "tool_use":
            out.append({"type": "tool_use", **_wire_id(dialect, block)})
    return out


def _wire_id(dialect: str, block: dict[str, Any]) -> dict[str, Any]:
    raw = block.get("id")
    ident = str(raw) if raw is not None else None
    if ident is not None and dialect == "responses" and ident.startswith("toolu_"):
        ident = "call_" + ident.removeprefix("toolu_")  # the scripted server's call_id for it
    if dialect == "gemini" and ident is not None and ident.startswith("toolu_"):
        ident = None  # the scripted server sends Gemini calls without an id
    return {"id": ident, "name": str(block.get("name", "")), "input": block.get("input", {})}


def tool_returns(dialect: str, body: dict[str, Any]) -> list[ToolReturn]:
    """The tool results a request carries in its last user turn."""
    if dialect == "responses":
        return _responses_returns(body)
    if dialect == "gemini":
        return _gemini_returns(body)
    messages = body.get("messages")
    last = messages[-1] if isinstance(messages, list) and messages else None
    if not isinstance(last, dict) or last.get("role") != "user" or not isinstance(last.get("content"), list):
        return []
    return [
        _return(block.get("tool_use_id"), None, block_text(block.get("content")), bool(block.get("is_error")))
        for block in last["content"]
        if isinstance(block, dict) and block.get("type") == "tool_result"
    ]


OUTPUT_ITEMS = ("function_call_output", "custom_tool_call_output", "local_shell_call_output")


def _responses_returns(body: dict[str, Any]) -> list[ToolReturn]:
    items = body.get("input")
    items = [i for i in items if isinstance(i, dict)] if isinstance(items, list) else []
    trailing: list[dict[str, Any]] = []
    for item in reversed(items):
        if item.get("type") not in OUTPUT_ITEMS:
            break
        trailing.append(item)
    return [_return(i.get("call_id"), None, block_text(i.get("output")), None) for i in reversed(trailing)]


def _gemini_returns(body: dict[str, Any]) -> list[ToolReturn]:
    contents = body.get("contents")
    last = contents[-1] if isinstance(contents, list) and contents else None
    if not isinstance(last, dict) or last.get("role") == "model":
        return []
    out = []
    for part in last.get("parts") or []:
        response = part.get("functionResponse") if isinstance(part, dict) else None
        if not isinstance(response, dict):
            continue
        value = response.get("response")
        is_error = isinstance(value, dict) and "error" in value and "output" not in value
        text = value.get("output", value.get("error", value)) if isinstance(value, dict) else value
        out.append(_return(response.get("id"), response.get("name"), block_text(text), is_error))
    return out


def _return(ident: Any, name: Any, text: str, is_error: Any) -> ToolReturn:
    return ToolReturn(
        id=str(ident) if ident is not None else None,
        name=str(name) if name is not None else None,
        output=text[:TOOL_OUTPUT_LIMIT],
        output_chars=len(text),
        is_error=bool(is_error) if is_error is not None else None,
    )


def block_text(content: Any) -> str:
    """A result's content as text: a string, the text of a list of parts, else its JSON.

    Example: ``block_text([{"type": "text", "text": "5"}])`` -> ``"5"``.
    """
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(part.get("text", ""))
            if part.get("type") in ("text", "input_text", "output_text")
            else f"[{part.get('type')}]"
            for part in content
            if isinstance(part, dict)
        )
    return "" if content is None else json.dumps(content, default=str)
