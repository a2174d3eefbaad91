"""The Gemini API (``POST /v1beta/models/<model>:streamGenerateContent?alt=sse`` and
``:generateContent``), the dialect Gemini CLI speaks.

Example::

    GEMINI.view({"contents": [{"role": "user", "parts": [{"text": "hi"}]}], "tools": [...]})
    b"".join(GEMINI.events(message))     # data: {"candidates": [...]} ... the last one with usageMetadata

A request holds ``systemInstruction``, ``contents`` (``user`` and ``model`` turns whose ``parts``
are text, ``functionCall`` or ``functionResponse``) and ``tools[].functionDeclarations``. The model
is named in the path, which the server copies into the body as ``model``. An answer streams as one
chunk per text block and per function call; the last chunk carries ``finishReason`` and
``usageMetadata`` (``promptTokenCount`` with the prefix already seen as ``cachedContentTokenCount``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from coder_eval.scripted.script import ErrorKind
from coder_eval.scripted.skills import listed_skills
from coder_eval.scripted.turns import RequestView, call, conversation_key
from coder_eval.scripted.usage import serialize

METHOD = re.compile(
    r"^/v1(?:beta|alpha)?/models/([^/:]+):(streamGenerateContent|generateContent|countTokens)$"
)
WORKSPACE = re.compile(r"Workspace Directories:\*\*\n\s*- (/\S*)|Workspace Directories:\n\s*- (/\S*)")
ERRORS: dict[ErrorKind, tuple[int, str, str]] = {
    "auth": (401, "UNAUTHENTICATED", "API key not valid. Please pass a valid API key."),
    "rate_limit": (429, "RESOURCE_EXHAUSTED", "Resource has been exhausted (e.g. check quota)."),
    "server": (500, "INTERNAL", "An internal error has occurred."),
    "overloaded": (503, "UNAVAILABLE", "The model is overloaded. Please try again later."),
}
"""Error kind -> (HTTP status, status name, default message)."""


def generate_method(path: str) -> tuple[str, str] | None:
    """(model, method) of a Gemini API path, or None.

    Example: ``generate_method("/v1beta/models/gemini-2.5-pro:generateContent")``
    -> ``("gemini-2.5-pro", "generateContent")``.
    """
    found = METHOD.match(path)
    return (found.group(1), found.group(2)) if found else None


def _part_text(part: dict[str, Any]) -> str:
    if "text" in part and not part.get("thought"):
        return str(part["text"])
    if "functionCall" in part:
        function = part["functionCall"]
        return f"{function.get('name', '')} {json.dumps(function.get('args', {}))}"
    if "functionResponse" in part:
        return _response_text(part["functionResponse"].get("response"))
    return ""


def _response_text(response: Any) -> str:
    if isinstance(response, dict):
        value = response.get("output", response.get("error", response))
        return value if isinstance(value, str) else json.dumps(value)
    return str(response or "")


def _parts(content: Any) -> list[dict[str, Any]]:
    parts = content.get("parts") if isinstance(content, dict) else None
    return [p for p in parts or [] if isinstance(p, dict)]


class Gemini:
    """The Gemini dialect; see the module docstring."""

    name = "gemini"

    def view(self, body: dict[str, Any]) -> RequestView:
        contents = [c for c in body.get("contents") or [] if isinstance(c, dict)]
        system = "\n".join(_part_text(p) for p in _parts(body.get("systemInstruction")))
        texts = ["\n".join(_part_text(p) for p in _parts(c)) for c in contents]
        text = "\n".join([system, *texts])
        last = contents[-1] if contents and contents[-1].get("role") != "model" else {}
        responses = [p for c in contents for p in _parts(c) if "functionResponse" in p]
        workspace = WORKSPACE.search(text)
        return RequestView(
            tools=frozenset(
                str(d.get("name", ""))
                for tool in body.get("tools") or []
                for d in tool.get("functionDeclarations") or []
            ),
            text=text,
            last_tool_results="\n".join(_part_text(p) for p in _parts(last) if "functionResponse" in p),
            assistant_count=sum(1 for c in contents if c.get("role") == "model"),
            conversation=conversation_key(texts[0] if texts else ""),
            calls=tuple(
                call(str(p["functionCall"].get("name", "")), p["functionCall"].get("args"))
                for c in contents
                for p in _parts(c)
                if "functionCall" in p
            ),
            skills=listed_skills(text),
            cwd=next((g for g in workspace.groups() if g), None) if workspace else None,
            model=str(body["model"]) if body.get("model") else None,
            outputs="\n".join(_part_text(p) for p in responses),
        )

    def chunks(self, body: dict[str, Any]) -> list[tuple[str, bool]]:
        pieces = [
            *(body.get("tools") or []),
            body.get("systemInstruction") or "",
            *(body.get("contents") or []),
        ]
        return [(serialize(piece), True) for piece in pieces]

    def streams(self, body: dict[str, Any], path: str) -> bool:
        method = generate_method(path)
        return method is not None and method[1] == "streamGenerateContent"

    def body(self, message: dict[str, Any]) -> dict[str, Any]:
        parts = [_part(block) for block in message["content"]]
        return _chunk(message, parts, final=True)

    def events(self, message: dict[str, Any]) -> Iterator[bytes]:
        blocks = message["content"]
        for index, block in enumerate(blocks):
            data = _chunk(message, [_part(block)], final=index == len(blocks) - 1)
            yield f"data: {json.dumps(data)}\r\n\r\n".encode()
        if not blocks:
            yield f"data: {json.dumps(_chunk(message, [], final=True))}\r\n\r\n".encode()

    def error(self, kind: ErrorKind, message: str | None) -> tuple[int, dict[str, Any]]:
        status, name, default = ERRORS[kind]
        return status, {"error": {"code": status, "message": message or default, "status": name}}


def _part(block: dict[str, Any]) -> dict[str, Any]:
    if block["type"] == "tool_use":
        return {"functionCall": {"name": block["name"], "args": block["input"]}}
    return {"text": block["text"]}


def _chunk(message: dict[str, Any], parts: list[dict[str, Any]], final: bool) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
    data: dict[str, Any] = {
        "candidates": [candidate],
        "modelVersion": message["model"],
        "responseId": message["id"],
    }
    if final:
        candidate["finishReason"] = "STOP"
        usage = message["usage"]
        cached = usage["cache_read_input_tokens"]
        prompt = usage["input_tokens"] + usage["cache_creation_input_tokens"] + cached
        data["usageMetadata"] = {
            "promptTokenCount": prompt,
            "cachedContentTokenCount": cached,
            "candidatesTokenCount": usage["output_tokens"],
            "totalTokenCount": prompt + usage["output_tokens"],
        }
    return data


GEMINI = Gemini()
