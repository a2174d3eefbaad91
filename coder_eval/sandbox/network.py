"""``network: model``: inside a sandbox with no network, the model endpoint and nothing else is reachable.

Example::

    proxy = ModelProxy(upstream=("127.0.0.1", 8123))       # the scripted server, or an HTTPS API
    await proxy.start(layout.run / "model.sock")            # bound read-only into the sandbox
    argv = forwarder_argv(python, tools / "forward.py", 8123, "/…/run/model.sock", ["claude", ...])

The sandbox has its own empty network namespace (only loopback). A small forwarder started inside it,
as the parent of the agent's CLI, listens on ``127.0.0.1:<port>`` (the endpoint's own port, so the
base URL the agent is given does not change) and relays each connection over a Unix socket bound into
the namespace to :class:`ModelProxy` in the harness, which connects to the real endpoint. For an
endpoint that is not on loopback (a real API over HTTPS), the proxy speaks HTTP ``CONNECT`` and the
agent gets ``HTTPS_PROXY=http://127.0.0.1:<port>``; only ``CONNECT`` to the allowed host and port is
accepted, so nothing else can be reached through it. That tunnel is what is left when the host holds
no key for the agent's provider: with a key, the forwarder's socket leads to the harness's API proxy
instead (``coder_eval.endpoint.proxy``), which holds the key and records every request.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from coder_eval.sandbox.sockets import serve_unix

FORWARDER = r"""
import os, socket, subprocess, sys, threading


def pump(src, dst):
    try:
        while chunk := src.recv(65536):
            dst.sendall(chunk)
    except OSError:
        pass
    finally:
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def relay(client, path):
    upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        upstream.connect(path)
    except OSError:
        client.close()
        return
    threading.Thread(target=pump, args=(client, upstream), daemon=True).start()
    pump(upstream, client)


def serve(listener, path):
    while True:
        client, _ = listener.accept()
        threading.Thread(target=relay, args=(client, path), daemon=True).start()


def main():
    port, path, argv = int(sys.argv[1]), sys.argv[2], sys.argv[4:]
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind(("127.0.0.1", port))
    except OSError as exc:
        sys.stderr.write(f"coder_eval: cannot reach the model endpoint from the sandbox: {exc}\n")
        return 70
    listener.listen(64)
    threading.Thread(target=serve, args=(listener, path), daemon=True).start()
    try:
        return subprocess.call(argv)
    except OSError as exc:
        sys.stderr.write(f"coder_eval: cannot start {argv[0]}: {exc}\n")
        return 127


sys.exit(main())
"""


def forwarder_argv(python: str, script: str, port: int, socket_inside: str, argv: Sequence[str]) -> list[str]:
    """``argv`` started under the in-sandbox forwarder for ``127.0.0.1:port``: isolated (``-I``) and without
    ``site`` (``-S``; the forwarder needs only the standard library), which starts it in about a third
    of the time (8 ms against 24 ms here), on every command of a sandbox with ``network: model``."""
    return [python, "-I", "-S", script, str(port), socket_inside, "--", *argv]


def endpoint_address(base_url: str) -> tuple[str, int]:
    """``("127.0.0.1", 8123)`` for ``http://127.0.0.1:8123``; the scheme's port when none is given."""
    parts = urlsplit(base_url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return parts.hostname or "127.0.0.1", port


def is_loopback(host: str) -> bool:
    return host in ("127.0.0.1", "localhost", "::1")


CONNECT_PORT = 18080
"""Port the in-sandbox forwarder listens on for a remote (HTTPS) endpoint, as ``HTTPS_PROXY``."""


@dataclass(frozen=True)
class ModelRoute:
    """How a sandbox with ``network: model`` reaches one endpoint.

    Example: ``ModelRoute.to("http://127.0.0.1:8123")`` -> port 8123, no extra environment;
    ``ModelRoute.to("https://api.anthropic.com")`` -> port 18080 and
    ``{"HTTPS_PROXY": "http://127.0.0.1:18080"}``.
    """

    upstream: tuple[str, int]
    port: int
    env: dict[str, str]

    @classmethod
    def to(cls, base_url: str) -> ModelRoute:
        host, port = endpoint_address(base_url)
        if is_loopback(host):
            return cls((host, port), port, {})
        proxy = f"http://127.0.0.1:{CONNECT_PORT}"
        return cls((host, port), CONNECT_PORT, {"HTTPS_PROXY": proxy, "https_proxy": proxy})


MAX_CONNECTIONS = 64
"""Connections relayed at once (each holds two of the harness's file descriptors)."""
CONNECT_HEAD_BYTES = 64 * 1024
"""The longest ``CONNECT`` request head read."""


class ModelProxy:
    """The harness end: relays each connection from the sandbox to ``upstream``, and only there
    (at most :data:`MAX_CONNECTIONS` at once; the first refused requests are kept in ``refused``)."""

    def __init__(self, upstream: tuple[str, int]) -> None:
        self.upstream = upstream
        self.connect_mode = not is_loopback(upstream[0])
        self.refused: list[str] = []
        self._server: asyncio.base_events.Server | None = None
        self._owed: dict[int, bool] = {}
        """Per open connection: bytes went upstream after the last bytes came back (a reply is owed)."""

    def awaiting_reply(self) -> bool:
        """The agent sent its model something on an open connection and nothing came back since."""
        return any(self._owed.values())

    async def start(self, socket_path: Path) -> None:
        self._server = await serve_unix(
            self._serve, socket_path, max_connections=MAX_CONNECTIONS, limit=CONNECT_HEAD_BYTES
        )

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 2)
            self._server = None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            if self.connect_mode and not await self._accept_connect(reader, writer):
                return
            up_reader, up_writer = await asyncio.open_connection(*self.upstream)
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):  # gone, or no request head
            writer.close()
            return
        key = id(writer)
        self._owed[key] = False
        try:
            await asyncio.gather(
                _pump(reader, up_writer, lambda: self._owed.__setitem__(key, True)),
                _pump(up_reader, writer, lambda: self._owed.__setitem__(key, False)),
            )
        finally:
            self._owed.pop(key, None)

    async def _accept_connect(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        """Read an HTTP ``CONNECT host:port`` request; answer 200 only for the upstream."""
        head = await reader.readuntil(b"\r\n\r\n")
        line = head.split(b"\r\n", 1)[0].decode("latin-1")
        method, _, rest = line.partition(" ")
        target = rest.split(" ", 1)[0]
        host, _, port = target.rpartition(":")
        if method.upper() != "CONNECT" or (host, port) != (self.upstream[0], str(self.upstream[1])):
            if len(self.refused) < 20:
                self.refused.append(line[:200])
            writer.write(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n")
            await writer.drain()
            writer.close()
            return False
        writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
        await writer.drain()
        return True


async def _pump(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, moved: Callable[[], None] = lambda: None
) -> None:
    try:
        while chunk := await reader.read(65536):
            moved()
            writer.write(chunk)
            await writer.drain()
    except (OSError, asyncio.IncompleteReadError):
        pass
    finally:
        with contextlib.suppress(OSError, RuntimeError):
            writer.close()
