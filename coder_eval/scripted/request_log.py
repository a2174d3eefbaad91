"""The request log: every request a scripted server received, and how it was answered.

Example::

    log = RequestLog(path=Path("requests.jsonl"))
    log.add(RecordedRequest(method="POST", path="/v1/messages", body={...}, kind="main",
                            turn=0, branch="blocks", error=None, status=200, ts=time.time()))
    log.snapshot()[-1].branch      # "blocks"
"""

from __future__ import annotations

import dataclasses
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
    size: int = 0
    """Bytes of the body as sent (its JSON is kept while the log's budget lasts, then ``body`` is None)."""
    answer: dict[str, Any] | None = None
    """The message served (Anthropic-shaped whatever the dialect), when one was."""
    dialect: str | None = None
    """The wire dialect that answered (``anthropic``, ``responses``, ``gemini``), when one did."""
    credential: str | None = None
    """The API key the request carried (``x-api-key``, ``x-goog-api-key`` or a bearer token)."""
    position: int | None = None
    """The assistant turns already in the conversation, as the server read them when it answered."""


BODY_BUDGET_BYTES = 32 * 1024 * 1024
"""Bodies (by the bytes sent) a log keeps in all; later requests are kept without theirs."""


class RequestLog:
    """A thread-safe list of :class:`RecordedRequest`, optionally appended to a JSONL file. Bodies
    are kept until they add up to ``body_budget`` bytes; every request after that is logged with
    ``body=None`` (a sandbox that sends request after request cannot grow the harness)."""

    def __init__(self, path: Path | None = None, body_budget: int = BODY_BUDGET_BYTES) -> None:
        self.path = path
        self.body_budget = body_budget
        self._items: list[RecordedRequest] = []
        self._kept = 0
        self._lock = threading.Lock()

    def add(self, request: RecordedRequest) -> None:
        """Keep ``request`` (and append it to ``path`` as one JSON line)."""
        with self._lock:
            self._kept += request.size
            if self._kept > self.body_budget and request.body is not None:
                request = dataclasses.replace(request, body=None)
            self._items.append(request)
            if self.path is not None:
                with self.path.open("a", encoding="utf-8") as file:
                    file.write(json.dumps(asdict(request), default=str) + "\n")

    def snapshot(self) -> list[RecordedRequest]:
        """The requests so far, in arrival order."""
        with self._lock:
            return list(self._items)
