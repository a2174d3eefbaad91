"""The watch: run limits that hold for every agent, checked on the events the agent writes.

Example::

    watch = Watch(sink, task.run_limits, armed=early_stop_criteria(task), check=evaluate_armed)
    outcome = await watch.run(agent.run(request, watch), timeout=task.run_limits.task_timeout)
    outcome.result or outcome.stop      # the agent's own result, or why the watch stopped it

The agent writes its events through the watch (it is the agent's ``EventSink``), which passes each to
the trajectory and keeps count: tool calls (``max_tool_calls``), tokens by bucket after each model
turn (``max_input_tokens``, ``max_output_tokens``, ``max_total_tokens``, with ``count_cached_input``
and ``count_cache_creation`` deciding whether cache reads and writes count), turns (``expected_turns``
is soft: only noted), the time since the agent last did anything (``turn_timeout``), and criteria armed
with ``stop_early``, evaluated at each tool-call boundary. When one of them says so, the agent is
cancelled (which kills every process it started) and the episode ends with that reason.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

from coder_eval.agents import AgentResult
from coder_eval.task.limits import RunLimits, token_overrun
from coder_eval.trajectory import Event, Message, Status, ToolCall, ToolResult, TrajectoryWriter, Usage

EarlyCheck = Callable[[list[Event]], Awaitable[bool]]
"""Evaluates the armed criteria on the events so far; True once every one of them is decided."""


@dataclass(frozen=True)
class Stop:
    """Why the watch ended the run."""

    status: Status
    reason: str


@dataclass
class WatchOutcome:
    """The agent's own result, or the watch's reason for stopping it (then ``result`` is None)."""

    result: AgentResult | None = None
    stop: Stop | None = None
    timed_out: bool = False
    notes: list[str] = field(default_factory=list)


class Watch:
    """The agent's sink during the agent phase (see the module docstring)."""

    def __init__(self, sink: TrajectoryWriter, limits: RunLimits, early: EarlyCheck | None = None) -> None:
        self.sink = sink
        self.limits = limits
        self.early = early
        self.tool_calls = 0
        self.turns = 0
        self.usage = Usage()
        self.stop: Stop | None = None
        self.last_activity = time.monotonic()
        self._wake = asyncio.Event()
        self._pending_checks: list[asyncio.Task[None]] = []

    @property
    def events(self) -> list[Event]:
        return self.sink.events

    def write(self, event: Event) -> None:
        """Record ``event`` and check the limits it moves."""
        self.sink.write(event)
        self.last_activity = time.monotonic()
        if isinstance(event, ToolCall) and event.parent_tool_use_id is None:
            self.tool_calls += 1
            limit = self.limits.max_tool_calls
            if limit is not None and self.tool_calls > limit:
                reason = f"more than max_tool_calls {limit} tool calls; the run was stopped"
                self._stop("budget_exceeded", reason)
        elif isinstance(event, Message) and event.role == "assistant" and event.usage is not None:
            self.turns += event.parent_tool_use_id is None
            self.usage = self.usage + event.usage
            over = self.over_budget()
            if over is not None:
                self._stop("budget_exceeded", over)
        elif isinstance(event, ToolResult) and self.early is not None:
            self._pending_checks.append(asyncio.ensure_future(self._check_early()))

    def over_budget(self) -> str | None:
        """Which token budget the turns so far exceed, if any."""
        over = token_overrun(self.limits, self.usage)
        return f"{over}; the run was stopped after the turn" if over else None

    async def _check_early(self) -> None:
        assert self.early is not None
        if self.stop is None and await self.early(list(self.sink.events)):
            self._stop("stopped_early", "the criteria armed with stop_early were decided")

    def _stop(self, status: Status, reason: str) -> None:
        if self.stop is None:
            self.stop = Stop(status, reason)
            self._wake.set()

    async def run(self, agent: Coroutine[Any, Any, AgentResult], timeout: float) -> WatchOutcome:
        """Run ``agent`` until it ends, the watch stops it, or ``timeout`` seconds pass."""
        task = asyncio.ensure_future(agent)
        deadline = time.monotonic() + timeout
        try:
            while not task.done():
                now = time.monotonic()
                if now >= deadline:
                    return WatchOutcome(timed_out=True, notes=self.notes())
                silent = self._silence_left(now)
                if silent is not None and silent <= 0:
                    silence = (
                        f"turn_timeout of {self.limits.turn_timeout:g} s: the agent did nothing that long"
                    )
                    self._stop("timeout", silence)
                if self.stop is not None:
                    return WatchOutcome(stop=self.stop, notes=self.notes())
                wait = min(deadline - now, silent if silent is not None else deadline - now)
                self._wake.clear()
                woken = asyncio.ensure_future(self._wake.wait())
                await asyncio.wait({task, woken}, timeout=wait, return_when=asyncio.FIRST_COMPLETED)
                woken.cancel()
            return WatchOutcome(result=task.result(), notes=self.notes())
        finally:
            await _cancel(task)
            for check in self._pending_checks:
                check.cancel()

    def _silence_left(self, now: float) -> float | None:
        if self.limits.turn_timeout is None:
            return None
        return self.last_activity + self.limits.turn_timeout - now

    def notes(self) -> list[str]:
        expected = self.limits.expected_turns
        if expected is not None and self.turns > expected:
            return [f"{self.turns} turns, more than the {expected} expected_turns"]
        return []


async def _cancel(task: asyncio.Future[Any]) -> None:
    """Cancel ``task`` (the agent kills what it started) and wait for it; its error is not ours."""
    if not task.done():
        task.cancel()
    await asyncio.wait({task})
    if not task.cancelled():
        task.exception()
