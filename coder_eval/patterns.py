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
import os
import queue
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
    """Run ``fn`` (which matches patterns with :func:`search`) in a worker thread, with a fresh
    ``MATCH_SECONDS`` for all its matches. Workers are daemons: a run that is cancelled (SIGTERM,
    SIGINT) stops waiting at once, and the process can exit while one finishes."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[T] = loop.create_future()
    context = contextvars.copy_context()
    context.run(_budget.set, _Budget(MATCH_SECONDS))

    def work() -> Callable[[], None]:
        try:
            outcome: tuple[T | None, BaseException | None] = (context.run(fn, *args, **kwargs), None)
        except BaseException as exc:  # handed to the awaiting coroutine, raised there
            outcome = (None, exc)

        def tell() -> None:
            with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits any more
                loop.call_soon_threadsafe(_settle, done, *outcome)

        return tell

    _WORKERS.submit(work)
    return await done


class _Workers:
    """Daemon threads that run matches, kept between episodes: starting a thread per criterion cost
    each episode about half a millisecond. A job goes to an idle worker, or to a new one when none
    is idle (a match that runs long never holds up another). A job returns how to tell its result,
    which the worker does once it counts itself idle again (the next job, sent as soon as the
    result is told, then finds it idle)."""

    def __init__(self) -> None:
        self.forget()
        os.register_at_fork(after_in_child=self.forget)

    def forget(self) -> None:
        """No worker (as in a forked child, where none of the parent's threads runs)."""
        self._jobs: queue.SimpleQueue[Callable[[], Callable[[], None]]] = queue.SimpleQueue()
        self._idle = 0
        self._lock = threading.Lock()

    def submit(self, job: Callable[[], Callable[[], None]]) -> None:
        with self._lock:
            start = self._idle == 0
            self._idle -= 0 if start else 1
        self._jobs.put(job)
        if start:
            threading.Thread(target=self._serve, name="coder_eval-match", daemon=True).start()

    def _serve(self) -> None:
        signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)  # delivered to the main thread instead
        while True:
            tell = self._jobs.get()()
            with self._lock:
                self._idle += 1
            tell()


_WORKERS = _Workers()


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
