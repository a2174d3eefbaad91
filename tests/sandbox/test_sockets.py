"""The harness's Unix sockets: bounded connections, and waiting connections are not read."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path

from coder_eval.sandbox.sockets import Slots, serve_unix

from .builders import run

MB = 1024 * 1024


def send_for(conn: socket.socket, seconds: float) -> int:
    """Bytes ``conn`` could send within ``seconds`` (stopped when its buffer stays full)."""
    conn.settimeout(seconds)
    sent = 0
    try:
        while sent < 8 * MB:
            sent += conn.send(b"x" * 65536)
    except TimeoutError:
        pass
    return sent


def test_a_connection_waiting_for_a_slot_is_not_read_into_the_harness(tmp_path: Path) -> None:
    path = tmp_path / "s.sock"
    slots = Slots(1)
    release = asyncio.Event()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        async with slots.held(writer):
            await release.wait()

    async def scenario() -> tuple[bool, int]:
        server = await serve_unix(handle, path, max_connections=8, limit=4 * MB)
        first = await asyncio.open_unix_connection(str(path))  # takes the only slot
        await asyncio.sleep(0.1)
        waiting = socket.socket(socket.AF_UNIX)
        waiting.connect(str(path))
        sent = await asyncio.to_thread(send_for, waiting, 1.0)  # the loop runs meanwhile
        release.set()
        first[1].close()
        waiting.close()
        server.close()
        return sent < 2 * MB, sent

    stalled, sent = run(scenario())

    assert stalled, f"{sent} bytes were taken in while the connection waited"


def test_a_connection_past_the_cap_is_closed_at_once(tmp_path: Path) -> None:
    path = tmp_path / "s.sock"
    forever = asyncio.Event()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await forever.wait()

    async def scenario() -> list[bytes]:
        server = await serve_unix(handle, path, max_connections=2, limit=MB)
        held = [await asyncio.open_unix_connection(str(path)) for _ in range(3)]
        answers = []
        for reader, _ in held:
            try:
                answers.append(await asyncio.wait_for(reader.read(1), 0.5))
            except TimeoutError:
                answers.append(b"open")
        for _, writer in held:
            writer.close()
        forever.set()
        server.close()
        return answers

    assert run(scenario()) == [b"open", b"open", b""]
