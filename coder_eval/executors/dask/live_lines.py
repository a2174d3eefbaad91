"""An episode's trajectory lines, from the worker running it to the run directory, as they are written.

Example::

    live = LiveFiles()                               # in the submitting process
    client.subscribe_topic(LINES_TOPIC, live.receive)
    live.open(key, path, task_hash)                  # before the episode is submitted
    ...                                              # lines are appended to ``path`` as they come
    live.close(key)                                  # then the finished files are written whole

On the worker, :func:`send_lines` follows the episode's scratch trajectory and sends each batch of
whole new lines as a dask event (``coder_eval-episode-lines``) every ``INTERVAL_S``; the submitter
appends them to the episode's file in the run directory, so ``coder-eval show --follow`` and the
explorer see a dask episode as it goes, as they see a local one. Each run of an episode on a worker
has an attempt id: a re-run after a worker died starts the file again, and lines of an attempt that
is not the latest (a dead worker's, arriving late) are dropped. Once the episode's result is in,
its file is written whole (atomically) and nothing more is appended. The streamed copy is the
harness's convenience only: the finished file replaces it, and a file left without ``episode_end``
(the submitter died) is read as interrupted, as a local one would be.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

LINES_TOPIC = "coder_eval-episode-lines"
INTERVAL_S = 0.5


async def send_lines(
    path: Path, send: Callable[[bytes], None], rewrite: Callable[[bytes], bytes] = lambda b: b
) -> None:
    """Until cancelled: every ``INTERVAL_S``, the whole lines appended to ``path`` since the last
    look, passed through ``rewrite``, handed to ``send``; a last look when cancelled."""
    sent = 0
    try:
        while True:
            await asyncio.sleep(INTERVAL_S)
            sent = _send_new(path, sent, send, rewrite)
    finally:
        _send_new(path, sent, send, rewrite)


def _send_new(path: Path, sent: int, send: Callable[[bytes], None], rewrite: Callable[[bytes], bytes]) -> int:
    try:
        with path.open("rb") as handle:
            handle.seek(sent)
            data = handle.read()
    except OSError:
        return sent
    whole = data[: data.rfind(b"\n") + 1]
    if whole:
        with contextlib.suppress(Exception):  # the worker is closing: the result says it all
            send(rewrite(whole))
    return sent + len(whole)


@dataclass
class _Live:
    path: Path
    task_hash: str
    attempt: str | None = None
    dropped: set[str] = field(default_factory=set)


class LiveFiles:
    """The submitter's side: each running episode's file, appended to as its lines arrive."""

    def __init__(self) -> None:
        self._open: dict[str, _Live] = {}

    def open(self, key: str, path: Path, task_hash: str) -> None:
        """Lines for ``key`` go to ``path`` (``episode_start.task_hash`` made ``task_hash``)."""
        self._open[key] = _Live(path, task_hash)

    def close(self, key: str) -> None:
        """No more lines for ``key``: its finished files are about to be written whole."""
        self._open.pop(key, None)

    def receive(self, event: tuple[float, dict[str, Any]]) -> None:
        """A dask event from :func:`send_lines`: ``{"key", "attempt", "lines"}``."""
        message = event[1]
        live = self._open.get(str(message.get("key")))
        attempt = str(message.get("attempt"))
        if live is None or attempt in live.dropped:
            return
        lines: bytes = message.get("lines") or b""
        mode = "ab"
        if attempt != live.attempt:  # a first run, or a re-run after a worker died: start again
            if live.attempt is not None:
                live.dropped.add(live.attempt)
            live.attempt, mode = attempt, "wb"
            lines = _with_task_hash(lines, live.task_hash)
        with contextlib.suppress(OSError), live.path.open(mode) as handle:
            handle.write(lines)


def _with_task_hash(lines: bytes, value: str) -> bytes:
    """The first line (``episode_start``) with ``task_hash`` set to ``value``."""
    first, newline, rest = lines.partition(b"\n")
    with contextlib.suppress(ValueError):
        start = json.loads(first)
        if isinstance(start, dict) and start.get("type") == "episode_start":
            start["task_hash"] = value
            first = json.dumps(start, ensure_ascii=False, separators=(",", ":")).encode()
    return first + newline + rest
