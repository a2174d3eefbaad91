"""HTTP routes of the scripted server (one handler instance per request).

Example: ``POST /v1/messages`` (Anthropic), ``POST /v1/responses`` (OpenAI Responses) and
``POST /v1beta/models/<model>:streamGenerateContent`` (Gemini) replay the script (JSON or SSE, see
``dialect.py``); ``POST /v1/messages/count_tokens`` and ``:countTokens`` estimate, ``GET /v1/models``
lists the script's model, ``HEAD /api/hello`` (Claude Code's connectivity check) is 200, anything
else is a logged 404 with the API's error JSON.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from typing import TYPE_CHECKING, Any

from coder_eval.scripted.dialect import Dialect, dialect_for
from coder_eval.scripted.gemini import generate_method
from coder_eval.scripted.replay import DEFAULT_MODEL, Answer
from coder_eval.scripted.request_log import RecordedRequest
from coder_eval.scripted.response import HTTP_ERRORS, error_body
from coder_eval.scripted.script import ErrorSpec
from coder_eval.scripted.usage import input_tokens, tokens

if TYPE_CHECKING:
    from coder_eval.scripted.server import ScriptedServer

MAX_BODY_BYTES = 8 * 1024 * 1024
"""The largest request body read (a larger one is answered 413 unread)."""
BODY_DEADLINE_S = 30.0
"""A body must arrive whole within this; a client that trickles it is disconnected."""
BODY_SLOTS = 2
"""Requests read and answered at once, by that many worker threads; further ones wait their turn
before their bodies are read (a scripted ``hang`` stalls outside the workers)."""


class _Unreadable(Exception):
    """The request's body was refused (too large: ``status``) or never arrived (``status`` None)."""

    def __init__(self, status: int | None, message: str = "") -> None:
        super().__init__(message)
        self.status = status


class Handler(BaseHTTPRequestHandler):
    """Routes requests to the owning :class:`ScriptedServer` (``self.server.app``)."""

    protocol_version = "HTTP/1.1"

    @property
    def app(self) -> ScriptedServer:
        return self.server.app  # type: ignore[attr-defined, no-any-return]

    def log_message(self, format: str, *args: Any) -> None:
        """Silent: every request is in the request log instead."""

    def do_POST(self) -> None:
        """Read and answer the request in one of the server's few body workers (so only their
        threads ever hold a large body), then stall here if the script says ``hang``."""
        self._stall: float | None = -1.0
        self.app.body_workers.run(self._post)
        if self._stall is None or self._stall >= 0:
            self.app.stopping.wait(self._stall)

    def _post(self) -> None:
        path = self.path.split("?", 1)[0]
        try:
            body = self._read_json()
        except _Unreadable as refused:
            self.close_connection = True
            if refused.status is not None:
                self._record(path, None, "other", refused.status)
                self._send_json(refused.status, error_body("request_too_large", str(refused)))
            return
        if not isinstance(body, dict):
            self._record(path, body, "other", 400)
            return self._send_json(400, error_body("invalid_request_error", "body must be a JSON object"))
        if path == "/v1/messages/count_tokens":
            self._record(path, body, "count_tokens", 200)
            return self._send_json(200, {"input_tokens": input_tokens(body)})
        method = generate_method(path)
        if method is not None:
            body.setdefault("model", method[0])
            if method[1] == "countTokens":
                self._record(path, body, "count_tokens", 200)
                return self._send_json(200, {"totalTokens": tokens(len(json.dumps(body)))})
        dialect = dialect_for(path)
        if dialect is None:
            return self._not_found(path, body)
        self._guarded(lambda: self._reply(path, body, dialect))

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        model = self.app.script.model or DEFAULT_MODEL
        entry = {"type": "model", "id": model, "display_name": model, "created_at": "2025-09-29T00:00:00Z"}
        if path == "/v1/models":
            self._record(path, None, "other", 200)
            return self._send_json(
                200, {"data": [entry], "has_more": False, "first_id": model, "last_id": model}
            )
        if path.startswith("/v1/models/"):
            self._record(path, None, "other", 200)
            return self._send_json(200, dict(entry, id=path.rsplit("/", 1)[1]))
        if path == "/api/hello":
            self._record(path, None, "other", 200)
            return self._send_json(200, {})
        self._not_found(path, None)

    def do_HEAD(self) -> None:
        path = self.path.split("?", 1)[0]
        status = 200 if path == "/api/hello" else 404
        self._record(path, None, "other", status)
        self.send_response(status)
        self.send_header("content-length", "0")
        self.end_headers()

    def _reply(self, path: str, body: dict[str, Any], dialect: Dialect) -> None:
        answer = self.app.replayer.answer(body, dialect)
        error = answer.selection.error
        http_error = error is not None and error.kind in HTTP_ERRORS
        status = dialect.error(error.kind, None)[0] if error is not None and http_error else 200
        self._record(path, body, answer.kind, status, answer, dialect)
        if error is not None and http_error:
            return self._send_error(error, dialect)
        assert answer.message is not None
        stream = dialect.streams(body, path)
        if error is not None:
            return self._send_broken(error, answer.message, stream, dialect)
        if stream:
            return self._send_stream(answer.message, dialect)
        self._send_json(200, dialect.body(answer.message))

    def _send_error(self, error: ErrorSpec, dialect: Dialect) -> None:
        status, data = dialect.error(error.kind, error.message)
        headers = {} if error.retry_after is None else {"retry-after": f"{error.retry_after:g}"}
        self._send_json(status, data, headers)

    def _send_stream(self, message: dict[str, Any], dialect: Dialect) -> None:
        self._start_stream()
        for event in dialect.events(message):
            self._chunk(event)
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _send_broken(self, error: ErrorSpec, message: dict[str, Any], stream: bool, dialect: Dialect) -> None:
        """Send the first ``after_events`` events (or half the JSON), stall if ``hang``, then cut."""
        self.close_connection = True
        if stream:
            self._start_stream()
            for _, event in zip(range(error.after_events), dialect.events(message), strict=False):
                self._chunk(event)
        elif error.kind == "cut_stream":
            payload = json.dumps(dialect.body(message)).encode()
            self._send_head(200, "application/json", {"content-length": str(len(payload))})
            self.wfile.write(payload[: len(payload) // 2])
            self.wfile.flush()
        if error.kind == "hang":
            self._stall = error.seconds  # stalled by do_POST: a stall holds no body worker

    def _not_found(self, path: str, body: Any) -> None:
        self._record(path, body, "other", 404)
        self._send_json(404, error_body("not_found_error", f"{self.command} {path} is not scripted"))

    def _read_json(self) -> Any:
        """The body: its JSON, its text when it is not JSON (``_Unreadable`` past the bounds)."""
        self._body_size = 0
        try:
            length = int(self.headers.get("content-length") or 0)
        except ValueError:
            raise _Unreadable(400, "content-length is not a number") from None
        if length < 0 or length > MAX_BODY_BYTES:
            raise _Unreadable(413, f"request body of {length} bytes; this server reads {MAX_BODY_BYTES}")
        self._body_size = length
        raw = self._read_body(length)
        try:
            return json.loads(raw) if raw else None
        except (ValueError, RecursionError):  # not JSON, or past the parser's limits
            return raw.decode("utf-8", errors="replace")

    def _read_body(self, length: int) -> bytes:
        deadline = time.monotonic() + BODY_DEADLINE_S
        chunks, left = [], length
        try:
            while left > 0:
                self.connection.settimeout(max(0.001, deadline - time.monotonic()))
                chunk = self.rfile.read1(min(left, 1 << 20))
                if not chunk or time.monotonic() > deadline:
                    raise _Unreadable(None)
                chunks.append(chunk)
                left -= len(chunk)
        except TimeoutError:
            raise _Unreadable(None) from None
        finally:
            self.connection.settimeout(None)
        return b"".join(chunks)

    def _record(
        self,
        path: str,
        body: Any,
        kind: str,
        status: int,
        answer: Answer | None = None,
        dialect: Dialect | None = None,
    ) -> None:
        selection = answer.selection if answer is not None else None
        error = selection.error if selection is not None else None
        self.app.log.add(
            RecordedRequest(
                method=self.command,
                path=path,
                body=body,
                kind=kind,
                turn=selection.turn if selection is not None else None,
                branch=selection.branch if selection is not None else None,
                error=error.kind if error is not None else None,
                status=status,
                ts=time.time(),
                size=getattr(self, "_body_size", 0) if body is not None else 0,
                answer=answer.message if answer is not None else None,
                dialect=dialect.name if dialect is not None else None,
                credential=self._credential(),
                position=answer.position if answer is not None else None,
            )
        )

    def _credential(self) -> str | None:
        """The API key the request carried, in whichever header its API puts it."""
        for name in ("x-api-key", "x-goog-api-key"):
            if value := self.headers.get(name):
                return str(value)
        bearer = str(self.headers.get("authorization") or "")
        return bearer.removeprefix("Bearer ").strip() or None

    def _send_json(self, status: int, data: Any, headers: dict[str, str] | None = None) -> None:
        payload = json.dumps(data).encode()
        self._send_head(status, "application/json", {"content-length": str(len(payload)), **(headers or {})})
        self.wfile.write(payload)
        self.wfile.flush()

    def _start_stream(self) -> None:
        self._send_head(
            200, "text/event-stream", {"cache-control": "no-cache", "transfer-encoding": "chunked"}
        )

    def _send_head(self, status: int, content_type: str, headers: dict[str, str]) -> None:
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("request-id", self.app.replayer.ids.new("req"))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):X}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _guarded(self, send: Callable[[], None]) -> None:
        """Run ``send``; a client that went away (timeout, cancelled stream) is not an error."""
        try:
            send()
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
