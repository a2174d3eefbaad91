"""A server served in its own thread: it answers, and ``stop`` ends it at once (its loop has no timer)."""

from __future__ import annotations

import socket
import socketserver
import threading
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from coder_eval.serving import Serving


class Hello(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b"hello"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


def serving_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "test-serving"]


def test_it_answers_requests_until_stopped_then_refuses_them() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Hello)
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    serving = Serving(server, name="test-serving")
    for _ in range(3):
        with urllib.request.urlopen(url, timeout=10) as answer:
            assert answer.read() == b"hello"

    serving.stop()

    assert serving_threads() == []
    with pytest.raises(OSError):
        urllib.request.urlopen(url, timeout=10)


def test_stop_ends_a_loop_that_waits_on_no_timer() -> None:
    """Nothing but the wake-up reaches the loop: without it ``stop`` would wait out its join timeout."""
    serving = Serving(ThreadingHTTPServer(("127.0.0.1", 0), Hello), name="test-serving")
    serving.stop(timeout=60)
    assert serving_threads() == []


def test_a_client_that_connects_and_sends_nothing_holds_up_neither_others_nor_stop() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Hello)
    port = server.server_address[1]
    serving = Serving(server, name="test-serving")
    idle = socket.create_connection(("127.0.0.1", port), timeout=10)
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=10) as answer:
            assert answer.read() == b"hello"
        serving.stop(timeout=60)
        assert serving_threads() == []
    finally:
        idle.close()


def test_it_serves_a_unix_socket_too(tmp_path: Path) -> None:
    path = tmp_path / "s.sock"

    class Echo(socketserver.StreamRequestHandler):
        def handle(self) -> None:
            self.wfile.write(self.rfile.readline().upper())

    serving = Serving(socketserver.ThreadingUnixStreamServer(str(path), Echo), name="test-serving")
    with socket.socket(socket.AF_UNIX) as client:
        client.settimeout(10)
        client.connect(str(path))
        client.sendall(b"ping\n")
        assert client.recv(16) == b"PING\n"
    serving.stop(timeout=60)
    assert serving_threads() == []
