"""The request log: every request a scripted server received, and how it was answered.

Example::

    log = RequestLog(path=Path("requests.jsonl"))
    log.add(RecordedRequest(method="POST", path="/v1/messages", body={...}, kind="main",
                            turn=0, branch="blocks", error=None, status=200, ts=time.time()))
    log.snapshot()[-1].branch      # "blocks"
"""

from __future__ import annotations

import json
import threading
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class RecordedRequest:
    """One request and its answer.

    ``kind`` is ``main``, ``subagent``, ``auxiliary``, ``count_tokens`` or ``other``; ``turn`` the
    script index that answered (None for final/auxiliary answers); ``branch`` ``blocks``,
    ``otherwise``, ``choose[i]``, ``error``, ``final`` or ``auxiliary``; ``error`` the injected
    error kind; ``path`` has no query string; ``ts`` is seconds since the epoch.
    """

    method: str
    path: str
    body: Any
    kind: str
    turn: int | None
    branch: str | None
    error: str | None
    status: int
    ts: float


class RequestLog:
    """A thread-safe list of :class:`RecordedRequest`, optionally appended to a JSONL file."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path
        self._items: list[RecordedRequest] = []
        self._lock = threading.Lock()

    def add(self, request: RecordedRequest) -> None:
        """Keep ``request`` (and append it to ``path`` as one JSON line)."""
        with self._lock:
            self._items.append(request)
            if self.path is not None:
                with self.path.open("a", encoding="utf-8") as file:
                    file.write(json.dumps(asdict(request), default=str) + "\n")

    def snapshot(self) -> list[RecordedRequest]:
        """The requests so far, in arrival order."""
        with self._lock:
            return list(self._items)
