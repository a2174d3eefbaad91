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
The thread is a daemon, so a cancelled run never waits for a match to finish.
A match that runs out of time raises :class:`PatternTimeout`, which grading records as that
criterion's failure (the agent's text did it), never a grader error. A worker process killed at a
deadline would also bound any Python code, but costs a process per criterion and a copy of the
text; a timeout inside the matcher costs nothing until it fires.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import signal
import threading
import time
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

from coder_eval.errors import PatternTimeout as PatternTimeout  # what a match out of time raises

if TYPE_CHECKING:
    import regex

MATCH_SECONDS = 5.0
"""How long one criterion's patterns may take, together, on the agent's text (the matcher counts the
process's CPU time, so on a loaded machine the wall-clock wait can be longer, never unbounded)."""

STOP_SIGNALS = {signal.SIGINT, signal.SIGTERM}
"""Never taken by a matching thread: the main thread wakes at once and handles them."""

P = ParamSpec("P")
T = TypeVar("T")


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
    """The pattern compiled the way ``re`` reads it (``VERSION0``; ``regex`` is imported on first use)."""
    import regex

    return regex.compile(pattern, flags | regex.VERSION0)


def check_pattern(pattern: str) -> None:
    """``ValueError`` when the matcher cannot read ``pattern`` (called when the task loads)."""
    import regex

    try:
        compiled(pattern)
    except regex.error as exc:
        raise ValueError(f"invalid regex {pattern!r}: {exc}") from exc


async def bounded(fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """Run ``fn`` (which matches patterns with :func:`search`) in a worker thread of its own, with a
    fresh ``MATCH_SECONDS`` for all its matches. The thread is a daemon: a run that is cancelled
    (SIGTERM, SIGINT) stops waiting for it at once, and the process can exit while it finishes."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[T] = loop.create_future()
    context = contextvars.copy_context()
    context.run(_budget.set, _Budget(MATCH_SECONDS))

    def work() -> None:
        signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)  # delivered to the main thread instead
        try:
            outcome: tuple[T | None, BaseException | None] = (context.run(fn, *args, **kwargs), None)
        except BaseException as exc:  # handed to the awaiting coroutine, raised there
            outcome = (None, exc)
        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits any more
            loop.call_soon_threadsafe(_settle, done, *outcome)

    threading.Thread(target=work, name="coder_eval-match", daemon=True).start()
    return await done


def _settle(done: asyncio.Future[Any], result: Any, error: BaseException | None) -> None:
    if done.done():  # cancelled while the thread ran
        return
    if error is not None:
        done.set_exception(error)
    else:
        done.set_result(result)


def _timeout(pattern: str) -> PatternTimeout:
    shown = pattern if len(pattern) <= 80 else pattern[:79] + "…"
    return PatternTimeout(
        f"matching the pattern {shown!r} against the agent's text took longer than {MATCH_SECONDS:g} s"
    )
