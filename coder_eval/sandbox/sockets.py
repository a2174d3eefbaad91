"""The harness's Unix sockets into a sandbox (the CLI recorder, the model proxy), bounded.

Example::

    server = await serve_unix(handle, socket_path, max_connections=64, limit=4 * MiB)
    ...
    server.close()

What is at the other end is the agent, which may open connections until the harness runs out of
file descriptors, or send data faster than it is read. A server made here holds at most
``max_connections`` at once (one more is closed at once, unread), and each connection's reader
buffers at most about ``2 * limit`` bytes before the transport stops reading from the socket.
:class:`Slots` bounds how many connections are *read* at once: a connection waiting for a slot has
its reading paused, so what it sends stays in the kernel's socket buffer, not in the harness.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


async def serve_unix(handle: Handler, path: Path, *, max_connections: int, limit: int) -> asyncio.Server:
    """A Unix socket server at ``path`` (world-writable: sandboxes run as other users) that runs
    ``handle`` for each connection while fewer than ``max_connections`` are open."""
    open_now = 0

    async def bounded(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal open_now
        if open_now >= max_connections:
            writer.close()
            return
        open_now += 1
        try:
            await handle(reader, writer)
        finally:
            open_now -= 1
            writer.close()

    path.parent.mkdir(parents=True, exist_ok=True)
    server = await asyncio.start_unix_server(bounded, path=str(path), limit=limit)
    path.chmod(0o777)
    return server


class Slots:
    """At most ``count`` connections read and answered at once; the others wait, not reading."""

    def __init__(self, count: int) -> None:
        self._free = asyncio.Semaphore(count)

    @contextlib.asynccontextmanager
    async def held(self, writer: asyncio.StreamWriter) -> AsyncIterator[None]:
        """Pause reading ``writer``'s connection until a slot is free, then resume it."""
        transport = writer.transport
        waits = self._free.locked()
        if waits:
            transport.pause_reading()  # type: ignore[attr-defined]
        async with self._free:
            if waits:
                transport.resume_reading()  # type: ignore[attr-defined]
            yield
