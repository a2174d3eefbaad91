"""The model route: loopback endpoints are relayed, remote ones only through an allow-listed CONNECT."""

from __future__ import annotations

import asyncio
import socket
import tempfile
from pathlib import Path

from coder_eval.sandbox.network import CONNECT_PORT, ModelProxy, ModelRoute

from .builders import run


def test_routes_for_loopback_and_remote_endpoints() -> None:
    assert ModelRoute.to("http://127.0.0.1:8123") == ModelRoute(("127.0.0.1", 8123), 8123, {})
    remote = ModelRoute.to("https://api.anthropic.com")
    assert (remote.upstream, remote.port) == (("api.anthropic.com", 443), CONNECT_PORT)
    assert remote.env["HTTPS_PROXY"] == f"http://127.0.0.1:{CONNECT_PORT}"


def test_connect_mode_allows_only_the_upstream() -> None:
    upstream = socket.create_server(("127.0.0.1", 0))
    port = upstream.getsockname()[1]

    async def scenario() -> tuple[bytes, bytes]:
        proxy = ModelProxy(("127.0.0.1", port))
        proxy.connect_mode = True  # as for a remote API
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "model.sock"
            await proxy.start(path)
            try:
                return await _connect(path, f"127.0.0.1:{port}"), await _connect(path, "evil.example:443")
            finally:
                await proxy.stop()

    try:
        allowed, refused = run(scenario())
    finally:
        upstream.close()
    assert allowed.startswith(b"HTTP/1.1 200") and refused.startswith(b"HTTP/1.1 403")


async def _connect(path: Path, target: str) -> bytes:
    reader, writer = await asyncio.open_unix_connection(str(path))
    writer.write(f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n".encode())
    await writer.drain()
    answer = await asyncio.wait_for(reader.readline(), 5)
    writer.close()
    return answer
