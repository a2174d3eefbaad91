"""Wire dialects: how one API reads a request and writes an answer, the script being the same.

Example::

    dialect = dialect_for("/v1/responses")        # OpenAI Responses (Codex)
    view = dialect.view(body)                     # what selection looks at
    answer = replayer.answer(body, dialect)       # an Anthropic-shaped message, then:
    dialect.body(answer.message)                  # the complete JSON answer, or
    b"".join(dialect.events(answer.message))      # its server-sent events

Every dialect answers from one message shape (the Anthropic one ``response.build_message`` makes:
content blocks, ``stop_reason``, ``usage`` by cache bucket) and renders it on its own wire.

| dialect | requests | used by |
|---|---|---|
| ``anthropic`` | ``POST /v1/messages`` | Claude Code, OpenCode, the anthropic client |
| ``responses`` | ``POST /v1/responses`` | Codex |
| ``gemini`` | ``POST /v1beta/models/<model>:streamGenerateContent`` / ``:generateContent`` | Gemini CLI |
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Protocol

from coder_eval.scripted.response import HTTP_ERRORS, error_body, sse, stream_events
from coder_eval.scripted.script import ErrorKind
from coder_eval.scripted.turns import RequestView
from coder_eval.scripted.usage import request_chunks


class Dialect(Protocol):
    """One wire API of the scripted server."""

    name: str

    def view(self, body: dict[str, Any]) -> RequestView:
        """The facts of a request body that turn selection needs."""
        ...

    def chunks(self, body: dict[str, Any]) -> list[tuple[str, bool]]:
        """The request's pieces in cache order, as (serialized piece, ends a cacheable prefix)."""
        ...

    def streams(self, body: dict[str, Any], path: str) -> bool:
        """Whether the client asked for server-sent events."""
        ...

    def body(self, message: dict[str, Any]) -> dict[str, Any]:
        """The complete (non-streaming) answer for ``message``."""
        ...

    def events(self, message: dict[str, Any]) -> Iterator[bytes]:
        """``message`` as server-sent events, one encoded event per item."""
        ...

    def error(self, kind: ErrorKind, message: str | None) -> tuple[int, dict[str, Any]]:
        """The HTTP status and JSON body of an injected error of ``kind`` (an ``HTTP_ERRORS`` kind)."""
        ...


class Anthropic:
    """The Anthropic Messages API (``response.py`` holds its shapes)."""

    name = "anthropic"

    def view(self, body: dict[str, Any]) -> RequestView:
        return RequestView.of(body)

    def chunks(self, body: dict[str, Any]) -> list[tuple[str, bool]]:
        return request_chunks(body)

    def streams(self, body: dict[str, Any], path: str) -> bool:
        return bool(body.get("stream"))

    def body(self, message: dict[str, Any]) -> dict[str, Any]:
        return message

    def events(self, message: dict[str, Any]) -> Iterator[bytes]:
        for event, data in stream_events(message):
            yield sse(event, data)

    def error(self, kind: ErrorKind, message: str | None) -> tuple[int, dict[str, Any]]:
        status, error_type, default = HTTP_ERRORS[kind]
        return status, error_body(error_type, message or default)


ANTHROPIC = Anthropic()


def dialect_for(path: str) -> Dialect | None:
    """The dialect that answers ``POST path`` (no query string), or None.

    Example: ``dialect_for("/v1beta/models/gemini-2.5-pro:streamGenerateContent").name`` -> ``"gemini"``.
    """
    from coder_eval.scripted.gemini import GEMINI, generate_method
    from coder_eval.scripted.openai_responses import RESPONSES

    if path == "/v1/messages":
        return ANTHROPIC
    if path in ("/v1/responses", "/responses"):
        return RESPONSES
    if generate_method(path) is not None:
        return GEMINI
    return None
