"""The scripted model server: the Anthropic Messages API on 127.0.0.1, in a background thread.

Example::

    with ScriptedServer(load_script("script.yaml", base_dir=task_dir), seed=1234) as server:
        client = anthropic.Anthropic(base_url=server.base_url, api_key="scripted")
        client.messages.create(model="claude-sonnet-4-5", max_tokens=100, messages=[...])
        server.requests[-1].branch     # "blocks"
"""

from __future__ import annotations

import queue
import ssl
import threading
from collections.abc import Callable
from http.server import ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any

from coder_eval.scripted.handler import BODY_SLOTS, Handler
from coder_eval.scripted.replay import Replayer
from coder_eval.scripted.request_log import RecordedRequest, RequestLog
from coder_eval.scripted.script import Script, load_script
from coder_eval.serving import Serving

MAX_CONNECTIONS = 64
"""Connections served at once; one more is closed unanswered (a client retries, as with any server)."""


class _HTTPServer(ThreadingHTTPServer):
    """A thread per connection, at most :data:`MAX_CONNECTIONS` of them."""

    daemon_threads = True
    request_queue_size = MAX_CONNECTIONS  # the listen backlog (5 by default: a burst was reset)
    app: ScriptedServer
    _open = 0
    _count_lock = threading.Lock()

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._count_lock:
            full = self._open >= MAX_CONNECTIONS
            self._open += 0 if full else 1
        if full:
            self.shutdown_request(request)
            return
        super().process_request(request, client_address)

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            with self._count_lock:
                self._open -= 1


class Workers:
    """A few daemon threads that run what request handlers hand them, one job at a time each.

    Example: ``workers.run(job)`` runs ``job`` in one of them and returns when it is done (raising
    what it raised); ``workers.stop()`` ends the threads once their jobs are done.
    """

    def __init__(self, count: int) -> None:
        self.count = count
        self._jobs: queue.SimpleQueue[tuple[Callable[[], None], threading.Event, list[BaseException]] | None]
        self._jobs = queue.SimpleQueue()
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()

    def run(self, job: Callable[[], None]) -> None:
        with self._lock:
            while len(self._threads) < self.count:
                thread = threading.Thread(target=self._serve, name="scripted-body", daemon=True)
                thread.start()
                self._threads.append(thread)
        done, raised = threading.Event(), list[BaseException]()
        self._jobs.put((job, done, raised))
        done.wait()
        if raised:
            raise raised[0]

    def stop(self) -> None:
        with self._lock:
            for _ in self._threads:
                self._jobs.put(None)
            self._threads = []

    def _serve(self) -> None:
        while (item := self._jobs.get()) is not None:
            job, done, raised = item
            try:
                job()
            except BaseException as exc:  # handed back to the handler, as if it had run there
                raised.append(exc)
            finally:
                done.set()


class ScriptedServer:
    """Serves ``script`` with ``seed`` on an ephemeral port; a context manager, or start()/stop().

    ``log_path`` (optional) gets every :class:`RecordedRequest` appended as a JSON line. With ``tls``
    (a server ``ssl.SSLContext``) it speaks HTTPS, as a real provider's API does.

    What reaches it may come from an agent's sandbox, so it is bounded: connections
    (:data:`MAX_CONNECTIONS`), request bodies (``handler.MAX_BODY_BYTES``, each sent within
    ``handler.BODY_DEADLINE_S``, read and answered by ``handler.BODY_SLOTS`` worker threads: only
    they ever hold a large body, which bounds what the allocator keeps too) and the bodies the
    request log keeps (``request_log.BODY_BUDGET_BYTES``).
    """

    def __init__(
        self,
        script: Script | dict[str, Any] | str | Path,
        seed: int = 0,
        log_path: Path | None = None,
        host: str = "127.0.0.1",
        tls: ssl.SSLContext | None = None,
    ) -> None:
        self.script = load_script(script)
        self.seed = seed
        self.replayer = Replayer(self.script, seed)
        self.stopping = threading.Event()
        self.body_workers = Workers(BODY_SLOTS)
        self._host = host
        self._tls = tls
        self._httpd: _HTTPServer | None = None
        self._serving: Serving | None = None
        self.log = RequestLog(log_path)

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT``, for ``ANTHROPIC_BASE_URL`` or ``Anthropic(base_url=...)``."""
        if self._httpd is None:
            raise RuntimeError("ScriptedServer is not started")
        host, port = self._httpd.server_address[:2]
        return f"{'https' if self._tls is not None else 'http'}://{host!s}:{port}"

    @property
    def requests(self) -> list[RecordedRequest]:
        """A snapshot of every request received so far, in arrival order."""
        return self.log.snapshot()

    def client_env(self) -> dict[str, str]:
        """Environment for a Claude Code CLI that should talk to this server."""
        return {
            "ANTHROPIC_BASE_URL": self.base_url,
            "ANTHROPIC_API_KEY": "scripted",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_TELEMETRY": "1",
        }

    def start(self) -> ScriptedServer:
        """Bind an ephemeral port and serve in a daemon thread."""
        if self._httpd is not None:
            return self
        self.stopping.clear()
        self._httpd = _HTTPServer((self._host, 0), Handler)
        if self._tls is not None:
            self._httpd.socket = self._tls.wrap_socket(self._httpd.socket, server_side=True)
        self._httpd.app = self
        self._serving = Serving(self._httpd, name="scripted-server")
        return self

    def stop(self) -> None:
        """Stop serving; hung responses are released and their connections closed."""
        if self._httpd is None or self._serving is None:
            return
        self.stopping.set()
        self._serving.stop()
        self.body_workers.stop()
        self._httpd, self._serving = None, None

    def __enter__(self) -> ScriptedServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
