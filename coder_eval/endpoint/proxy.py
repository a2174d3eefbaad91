"""The harness's API proxy in front of a real model: the agent's CLI speaks plain HTTP to it with a
dummy key, and the harness makes the real HTTPS request with the real key, recording each exchange.

Example::

    proxy = ApiProxy("https://api.anthropic.com", Credential("x-api-key", os.environ["ANTHROPIC_API_KEY"]))
    proxy.start(unix_socket=layout.run / "model.sock")    # or proxy.start() on 127.0.0.1 (tempdir)
    ...                                                    # the CLI, base URL http://127.0.0.1:<port>
    proxy.calls()        # [ModelCall(...), ...]: what the model asked for, what the CLI sent back, usage
    proxy.stop()

The real key never enters the sandbox: the CLI is given :data:`DUMMY_KEY`, and every credential a
request carries (``x-api-key``, ``authorization``, ``x-goog-api-key``, a ``key`` query parameter) is
dropped before the request goes on with the real one. Request paths are kept (``/v1/messages``,
``/v1/responses``, ``/v1beta/models/<m>:streamGenerateContent``), so the same CLI configuration as
for the scripted server works. Answers stream back as they come (server-sent events are relayed chunk
by chunk) while a bounded copy is kept to be read (``wire.py``) once the answer ends. Bounded like
every harness point the agent reaches: connections, request bodies, and the copy kept of each answer.
Under ``network: model`` the sandbox's forwarder relays the CLI's connections to the proxy's Unix
socket; under ``tempdir`` the proxy listens on the host's loopback.
"""

from __future__ import annotations

import json
import os
import socketserver
import ssl
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlencode, urlsplit

from coder_eval.endpoint.exchange import Exchange, proxied_call, request_kind
from coder_eval.endpoint.wire import read_answer
from coder_eval.scripted.dialect import dialect_for
from coder_eval.serving import Serving
from coder_eval.trajectory import ModelCall

if TYPE_CHECKING:
    import httpx  # imported when a proxy is made: only episodes with a real endpoint need it

DUMMY_KEY = "coder-eval-proxied-key"
"""The key the agent's CLI is given: the proxy replaces it; the real one stays with the harness."""
MAX_CONNECTIONS = 64
MAX_BODY_BYTES = 8 * 1024 * 1024
"""The largest request body passed on (a larger one is answered 413)."""
KEPT_ANSWER_BYTES = 32 * 1024 * 1024
"""Bytes of one answer kept to be read; past them the answer still streams, unrecorded in content."""
CREDENTIAL_HEADERS = frozenset({"x-api-key", "authorization", "x-goog-api-key", "api-key"})
HOP_HEADERS = frozenset(
    {
        "connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer",
        "transfer-encoding", "upgrade", "host", "content-length", "accept-encoding", "content-encoding",
    }
)  # fmt: skip


@dataclass(frozen=True)
class Credential:
    """The real key and how its API takes it: ``Credential("x-api-key", key)``,
    ``Credential("authorization", key)`` (sent as ``Bearer <key>``), ``Credential("x-goog-api-key", key)``."""

    header: str
    key: str

    def headers(self) -> dict[str, str]:
        value = f"Bearer {self.key}" if self.header == "authorization" else self.key
        return {self.header: value}


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = MAX_CONNECTIONS
    proxy: ApiProxy


class _UnixServer(socketserver.ThreadingUnixStreamServer):
    daemon_threads = True
    request_queue_size = MAX_CONNECTIONS
    proxy: ApiProxy


class ApiProxy:
    """See the module docstring. ``verify``: the CA bundle to trust upstream (default: the system's)."""

    def __init__(self, upstream: str, credential: Credential, verify: ssl.SSLContext | bool = True) -> None:
        parts = urlsplit(upstream)
        self.origin = f"{parts.scheme}://{parts.netloc}"
        self.credential = credential
        import httpx

        self.client = httpx.Client(
            verify=verify, timeout=httpx.Timeout(60.0, read=600.0), follow_redirects=False, trust_env=False
        )
        self._calls: list[ModelCall] = []
        self._pending = 0
        self._lock = threading.Lock()
        self._open = 0
        self._server: _Server | _UnixServer | None = None
        self._serving: Serving | None = None

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT`` when listening on loopback."""
        assert isinstance(self._server, _Server), (
            "listening on a Unix socket: the forwarder's port is the URL"
        )
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self, unix_socket: Path | None = None) -> ApiProxy:
        """Listen on ``unix_socket`` (a sandbox's forwarder reaches it), else on 127.0.0.1."""
        if unix_socket is not None:
            unix_socket.parent.mkdir(parents=True, exist_ok=True)
            self._server = _UnixServer(str(unix_socket), _Handler)
            unix_socket.chmod(0o777)
        else:
            self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.proxy = self
        self._serving = Serving(self._server, name="api-proxy")
        return self

    def stop(self) -> None:
        """Stop serving and close the upstream client."""
        if self._serving is not None:
            self._serving.stop()
            self._server, self._serving = None, None
        self.client.close()

    def calls(self) -> list[ModelCall]:
        """Every exchange so far, as ``model_call`` events in request order."""
        with self._lock:
            return sorted(self._calls, key=lambda c: c.seq)

    def answered(self) -> bool | None:
        """Whether the model answered a request of the conversation (None: none was made yet)."""
        asked = [c for c in self.calls() if c.kind in ("main", "subagent")]
        return any(c.status == 200 for c in asked) if asked or self._pending else None

    def awaiting_reply(self) -> bool:
        """A request is with the model and its answer has not ended."""
        return self._pending > 0

    def __enter__(self) -> ApiProxy:
        return self if self._server is not None else self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def _admit(self) -> bool:
        with self._lock:
            if self._open >= MAX_CONNECTIONS:
                return False
            self._open += 1
            return True

    def _leave(self) -> None:
        with self._lock:
            self._open -= 1

    def _owe(self, change: int) -> None:
        with self._lock:
            self._pending += change

    def _record(self, exchange: Exchange) -> None:
        with self._lock:
            self._calls.append(proxied_call(exchange, seq=len(self._calls)))

    def forward(self, method: str, target: str, headers: dict[str, str], body: bytes) -> _Upstream:
        """Open the upstream request (its answer is read by iterating the result)."""
        path, query = _without_key(target)
        outgoing = {k: v for k, v in headers.items() if k.lower() not in HOP_HEADERS | CREDENTIAL_HEADERS}
        outgoing.update(self.credential.headers())
        outgoing["accept-encoding"] = "identity"
        request = self.client.build_request(
            method, f"{self.origin}{path}{'?' + query if query else ''}", headers=outgoing, content=body
        )
        return _Upstream(self.client.send(request, stream=True))


def upstream_verify() -> ssl.SSLContext | bool:
    """What the proxy trusts upstream: the host's ``SSL_CERT_FILE`` when set (a private CA, a test's
    self-signed certificate), else the system's certificates."""
    bundle = os.environ.get("SSL_CERT_FILE")
    return ssl.create_default_context(cafile=bundle) if bundle else True


def _without_key(target: str) -> tuple[str, str]:
    """The path, and the query without a ``key`` parameter (Gemini's other way to send a key)."""
    parts = urlsplit(target)
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k != "key"]
    return parts.path or "/", urlencode(query)


class _Upstream:
    """An upstream answer being relayed."""

    def __init__(self, response: httpx.Response) -> None:
        self.response = response

    def chunks(self) -> Iterator[bytes]:
        try:
            yield from self.response.iter_raw()
        finally:
            self.response.close()


@dataclass
class _Passed:
    """An answer passed on: its status (None: none came), a bounded copy, what broke, how to end it."""

    status: int | None = None
    content_type: str = ""
    kept: bytearray = field(default_factory=bytearray)
    error: str | None = None
    finish: Callable[[], None] = lambda: None


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    @property
    def proxy(self) -> ApiProxy:
        return self.server.proxy  # type: ignore[attr-defined, no-any-return]

    def address_string(self) -> str:
        return "sandbox"

    def log_message(self, format: str, *args: Any) -> None:
        """Silent: every exchange is recorded instead."""

    def handle(self) -> None:
        if not self.proxy._admit():
            return
        try:
            super().handle()
        finally:
            self.proxy._leave()

    def do_POST(self) -> None:
        self._relay("POST")

    def do_GET(self) -> None:
        self._relay("GET")

    def do_HEAD(self) -> None:
        self._relay("HEAD")

    def _relay(self, method: str) -> None:
        """Pass the request on and the answer back; the exchange is recorded before the client gets
        the answer's end, so a CLI that has its answer finds it in the record."""
        started = time.time()
        path = self.path.split("?", 1)[0]
        body = self._body()
        if body is None:
            return
        dialect = dialect_for(path)
        self.proxy._owe(1)
        try:
            passed = self._pass_on(method, body)
        finally:
            self.proxy._owe(-1)
        name = dialect.name if dialect is not None else "other"
        answered = passed.status == 200 and passed.error is None
        message = read_answer(name, bytes(passed.kept), passed.content_type) if answered and dialect else None
        error = passed.error or (None if passed.status == 200 else _error_text(bytes(passed.kept)))
        status = passed.status if passed.error is None else None
        self._done(name, path, _json_body(body), status, message, error, started)
        passed.finish()

    def _pass_on(self, method: str, body: bytes) -> _Passed:
        """Send the upstream answer's head and body to the client as they come, all but its end."""
        import httpx

        passed = _Passed()
        try:
            upstream = self.proxy.forward(method, self.path, dict(self.headers.items()), body)
            passed.status = upstream.response.status_code
            passed.content_type = upstream.response.headers.get("content-type", "")
            bodiless = method == "HEAD" or passed.status in (204, 304)
            self._send_head(upstream.response, chunked=not bodiless)
            for chunk in upstream.chunks():
                if len(passed.kept) < KEPT_ANSWER_BYTES:
                    passed.kept += chunk[: KEPT_ANSWER_BYTES - len(passed.kept)]
                if not bodiless:
                    self._chunk(chunk)
            passed.finish = (lambda: None) if bodiless else self._end
        except (httpx.HTTPError, OSError) as exc:
            passed.error = f"{type(exc).__name__}: {exc}"
            if passed.status is None:
                reason = f"the model endpoint could not be reached: {passed.error}"
                passed.finish = lambda: self._fail(502, reason)
        return passed

    def _done(
        self,
        dialect: str,
        path: str,
        body: Any,
        status: int | None,
        message: dict[str, Any] | None,
        error: str | None,
        started: float,
    ) -> None:
        if request_kind(path, body) == "other" and status == 200:
            return  # a listing or a connectivity check: nothing of the conversation
        self.proxy._record(
            Exchange(dialect, path, body, status, message, error, started, time.time() - started)
        )

    def _body(self) -> bytes | None:
        try:
            length = int(self.headers.get("content-length") or 0)
        except ValueError:
            length = -1
        if self.headers.get("transfer-encoding") or length < 0 or length > MAX_BODY_BYTES:
            self._fail(
                413 if length > MAX_BODY_BYTES else 411, "the request needs a content-length under 8 MiB"
            )
            return None
        return self.rfile.read(length) if length else b""

    def _send_head(self, response: httpx.Response, chunked: bool) -> None:
        self.send_response(response.status_code)
        for name, value in response.headers.items():
            if name.lower() not in HOP_HEADERS:
                self.send_header(name, value)
        self.send_header("transfer-encoding", "chunked") if chunked else self.send_header(
            "content-length", "0"
        )
        self.end_headers()

    def _chunk(self, data: bytes) -> None:
        if data:
            self.wfile.write(f"{len(data):X}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()

    def _end(self) -> None:
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _fail(self, status: int, message: str) -> None:
        payload = json.dumps({"type": "error", "error": {"type": "proxy_error", "message": message}}).encode()
        self.close_connection = True
        try:
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)
        except OSError:
            pass


def _json_body(body: bytes) -> Any:
    try:
        return json.loads(body) if body else None
    except (ValueError, RecursionError):
        return None


def _error_text(body: bytes) -> str | None:
    """The message of an error answer, short."""
    parsed = _json_body(body)
    if isinstance(parsed, dict):
        error = parsed.get("error")
        if isinstance(error, dict):
            return str(error.get("message") or error.get("type") or "")[:300] or None
    return body[:300].decode("utf-8", errors="replace") or None
