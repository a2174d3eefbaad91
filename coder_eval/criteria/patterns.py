"""A task author's regular expressions matched against what the agent wrote, within a deadline.

Example::

    async def evaluate(self, ctx):
        return await bounded(self._checks, text)    # in a worker thread, MATCH_SECONDS to match

    def _checks(self, text):
        return {"has_total": search(r"total: (\\d+)", text, re.MULTILINE) is not None}

The agent chooses the text, so a pattern with catastrophic backtracking (``(a|aa)+$`` against forty
``a`` and a ``b``) must neither stall the harness nor cost more than a bounded time. Matching uses the
``regex`` module in its ``re``-compatible mode (``VERSION0``; patterns are also checked with ``re``
when the task loads), whose matching functions take a timeout and release the GIL: the matching of
one criterion runs in a worker thread (``bounded``), so the event loop, the other episodes and the
signal handlers (SIGTERM, SIGINT) go on, and all of a criterion's matches share ``MATCH_SECONDS``.
A match that runs out of time raises :class:`PatternTimeout`, which grading records as that
criterion's failure (the agent's text did it), never a grader error. A worker process killed at a
deadline would also bound any Python code, but costs a process per criterion and a copy of the
text; a timeout inside the matcher costs nothing until it fires.
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, ParamSpec, TypeVar

import regex

from coder_eval.sandbox.base import WorkspaceFileError

MATCH_SECONDS = 5.0
"""How long one criterion's patterns may take, together, on the agent's text."""

P = ParamSpec("P")
T = TypeVar("T")


class PatternTimeout(WorkspaceFileError):
    """A pattern ran out of time on text the agent wrote: that criterion fails (the agent's doing)."""


@dataclass
class _Budget:
    seconds: float


_budget: ContextVar[_Budget | None] = ContextVar("coder_eval_match_budget", default=None)


def search(pattern: str, text: str, flags: int = 0) -> regex.Match[str] | None:
    """``re.search`` within what is left of the criterion's ``MATCH_SECONDS``; ``PatternTimeout``
    when it runs out."""
    budget = _budget.get() or _Budget(MATCH_SECONDS)
    if budget.seconds <= 0:
        raise _timeout(pattern)
    started = time.monotonic()
    try:
        return compiled(pattern, flags).search(text, timeout=budget.seconds)
    except TimeoutError as exc:
        budget.seconds = 0.0
        raise _timeout(pattern) from exc
    finally:
        budget.seconds -= time.monotonic() - started


def findall(pattern: str, text: str, flags: int = 0) -> list[Any]:
    """``re.findall`` within the same budget."""
    budget = _budget.get() or _Budget(MATCH_SECONDS)
    started = time.monotonic()
    try:
        return list(compiled(pattern, flags).findall(text, timeout=max(budget.seconds, 0.001)))
    except TimeoutError as exc:
        budget.seconds = 0.0
        raise _timeout(pattern) from exc
    finally:
        budget.seconds -= time.monotonic() - started


@functools.lru_cache(maxsize=512)
def compiled(pattern: str, flags: int = 0) -> regex.Pattern[str]:
    """The pattern compiled the way ``re`` reads it (``VERSION0``)."""
    return regex.compile(pattern, flags | regex.VERSION0)


def check_pattern(pattern: str) -> None:
    """``ValueError`` when the matcher cannot read ``pattern`` (called when the task loads)."""
    try:
        compiled(pattern)
    except regex.error as exc:
        raise ValueError(f"invalid regex {pattern!r}: {exc}") from exc


async def bounded(fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """Run ``fn`` (which matches patterns with :func:`search`) in a worker thread, with a fresh
    ``MATCH_SECONDS`` for all its matches."""
    token = _budget.set(_Budget(MATCH_SECONDS))
    try:
        return await asyncio.to_thread(fn, *args, **kwargs)
    finally:
        _budget.reset(token)


def _timeout(pattern: str) -> PatternTimeout:
    shown = pattern if len(pattern) <= 80 else pattern[:79] + "…"
    return PatternTimeout(
        f"matching the pattern {shown!r} against the agent's text took longer than {MATCH_SECONDS:g} s"
    )
