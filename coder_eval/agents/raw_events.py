"""Every raw event an agent CLI emitted, in a per-episode log of the run, for debugging an integration.

Example::

    with RawEventLog.open(Path("runs/r/raw/t--default--r0.jsonl")) as raw:
        raw.event("stdout", {"type": "assistant", "message": {...}})   # a JSON event, as parsed
        raw.line("stderr", "retrying in 2 s")                           # a line that is not one

Switched on by ``CODER_EVAL_RAW_SDK_LOG=1`` (``true``, ``yes`` and ``on`` too: the original
coder_eval's switch) or ``coder-eval run --raw-events``; off, nothing is written. The log sits in the
run directory as ``raw/<episode_id>.jsonl`` (:func:`raw_events_path`), one JSON object a line: ``seq``
(from 0), ``t`` (seconds since the log opened), ``stream`` (``stdout``, ``stderr``, or ``harness`` for
the log's own notes) and either ``event`` (a JSON object the CLI printed, as it printed it) or
``text`` (a line that is not one).

The events are the agent's own text: the log holds them as data only. Each line is written with
every non-ASCII and control character escaped, so the file is plain ASCII JSON that no terminal or
browser interprets; coder_eval never reads it back, runs it, or shows it in a report. It is bounded:
an event longer than :data:`EVENT_LIMIT` (as JSON) is kept as the first part of its text with
``truncated`` and its full length, and once the log holds :data:`LOG_LIMIT` bytes the rest of the
episode's events are counted, not written (the last line says how many).
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Mapping
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from types import TracebackType
from typing import IO, Any, Literal

from coder_eval.errors import RunWriteError

SWITCH = "CODER_EVAL_RAW_SDK_LOG"
"""The environment variable that turns the log on."""

TRUTHY = frozenset({"1", "true", "yes", "on"})

RAW_EVENTS_DIR = "raw"
"""The run directory's folder of raw event logs, one file per episode."""

EVENT_LIMIT = 256 * 1024
"""The most kept of one event (its JSON text, in characters)."""

LOG_LIMIT = 64 * 1024 * 1024
"""The most one episode's log holds (bytes); later events are counted, not written."""

Stream = Literal["stdout", "stderr", "harness"]


def raw_events_enabled(environ: Mapping[str, str] | None = None) -> bool:
    """Whether :data:`SWITCH` is set to a true value (``1``, ``true``, ``yes``, ``on``).

    Example: ``raw_events_enabled({"CODER_EVAL_RAW_SDK_LOG": "yes"})`` -> ``True``.
    """
    value = (os.environ if environ is None else environ).get(SWITCH, "")
    return value.strip().lower() in TRUTHY


def raw_events_path(trajectory: Path) -> Path:
    """Where the raw log of the episode whose trajectory is ``trajectory`` goes: ``raw/<id>.jsonl``
    beside the run's ``episodes/`` folder.

    Example: ``raw_events_path(Path("runs/r/episodes/t--a--r0.jsonl"))`` ->
    ``Path("runs/r/raw/t--a--r0.jsonl")``.
    """
    return trajectory.parent.parent / RAW_EVENTS_DIR / trajectory.name


def raw_log(path: Path | None) -> AbstractContextManager[RawEventLog | None]:
    """The episode's log at ``path`` (None: the switch is off, nothing is logged); ``RunWriteError``
    when it cannot be made.

    Example: ``with raw_log(None) as raw: assert raw is None``.
    """
    if path is None:
        return nullcontext()
    try:
        return RawEventLog.open(path)
    except OSError as exc:
        raise RunWriteError.of(path, exc) from exc


class RawEventLog:
    """One episode's raw event log (see the module docstring); a context manager that closes it."""

    def __init__(self, handle: IO[str]) -> None:
        self._handle = handle
        self._start = time.monotonic()
        self._seq = 0
        self._written = 0
        self._dropped = 0

    @classmethod
    def open(cls, path: Path) -> RawEventLog:
        """A new log at ``path`` (its folder made); one already there is added to (a retried
        attempt's events follow the earlier attempt's)."""
        path.parent.mkdir(parents=True, exist_ok=True)
        return cls(path.open("a", encoding="ascii"))

    def event(self, stream: Stream, event: Any) -> None:
        """A JSON value the CLI printed (or the SDK read from it), as it was."""
        self._write(stream, "event", event)

    def line(self, stream: Stream, text: str) -> None:
        """A line that is not a JSON event (stderr, or plain text on stdout)."""
        self._write(stream, "text", text)

    def note(self, text: str) -> None:
        """The harness's own line (an attempt starts again)."""
        self._write("harness", "text", text)

    def close(self) -> None:
        if self._dropped:
            self._emit(
                {"seq": self._seq, "t": self._elapsed(), "stream": "harness", "dropped": self._dropped}
            )
        with contextlib.suppress(OSError):
            self._handle.close()

    def _write(self, stream: Stream, key: str, value: Any) -> None:
        if self._written >= LOG_LIMIT:
            self._dropped += 1
            return
        record: dict[str, Any] = {"seq": self._seq, "t": self._elapsed(), "stream": stream}
        try:
            body = json.dumps(value, ensure_ascii=True, default=repr)
        except (ValueError, RecursionError):  # a cycle, or nested past the encoder's limits
            key, value = "text", repr(value)[: EVENT_LIMIT + 1]
            body = json.dumps(value)
        if len(body) > EVENT_LIMIT:
            record.update(text=body[:EVENT_LIMIT], truncated=True, length=len(body))
        else:
            record[key] = value
        self._seq += 1
        self._emit(record)

    def _emit(self, record: dict[str, Any]) -> None:
        line = json.dumps(record, ensure_ascii=True, default=repr, separators=(",", ":")) + "\n"
        try:
            self._handle.write(line)
            self._handle.flush()
        except (OSError, ValueError):  # a full disk (or a closed log) costs the log, never the episode
            self._written = LOG_LIMIT
            return
        self._written += len(line)

    def _elapsed(self) -> float:
        return round(time.monotonic() - self._start, 3)

    def __enter__(self) -> RawEventLog:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
