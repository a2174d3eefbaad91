"""The watch on a dask cluster: a scheduler that stops answering, or a cluster left with no worker,
ends the run as ``interrupted`` instead of leaving it waiting for ever.

Example::

    watch = ClusterWatch(client, "tcp://10.0.0.5:8786")
    task = asyncio.ensure_future(watch.watch())
    files = await watch.until_lost(client.submit(run_on_worker, ...))   # ExecutorLost once it is gone

Every ``HEARTBEAT_S`` the scheduler is asked who it is (a small RPC, with its list of workers). No
answer for 10 s (it died, its machine is gone or frozen, the network between is cut: a connection
that is never closed otherwise waits for ever), or no worker for 30 s while episodes wait (a running
cluster whose workers all died; the LocalCluster coder_eval starts replaces a dead worker within
seconds), and every episode still waiting raises ``ExecutorLost``: ``run`` leaves them interrupted,
says why, and ``--resume`` against a cluster that answers finishes the run. Both times are dask
configuration (``coder_eval.scheduler-timeout``, ``coder_eval.no-workers-timeout``; in the
environment ``DASK_CODER_EVAL__SCHEDULER_TIMEOUT=20s``), for a cluster that scales from no worker.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable
from typing import Any, TypeVar

import dask.config
from dask.utils import parse_timedelta

from coder_eval.errors import ExecutorLost

HEARTBEAT_S = 2.0
SCHEDULER_TIMEOUT = "10s"
NO_WORKERS_TIMEOUT = "30s"

T = TypeVar("T")


class ClusterWatch:
    """Whether the cluster behind ``client`` is still there (see the module docstring)."""

    def __init__(self, client: Any, where: str) -> None:
        self.client = client
        self.where = where
        self.scheduler_timeout = _seconds("scheduler-timeout", SCHEDULER_TIMEOUT)
        self.no_workers_timeout = _seconds("no-workers-timeout", NO_WORKERS_TIMEOUT)
        self.lost: str | None = None
        self.waiting = 0
        self._gone = asyncio.Event()

    async def watch(self) -> None:
        """Ask the scheduler every ``HEARTBEAT_S`` until it is lost (then every waiter is told)."""
        answered = has_workers = time.monotonic()
        while self.lost is None:
            await asyncio.sleep(HEARTBEAT_S)
            workers = await self._workers()
            now = time.monotonic()
            if workers is not None:
                answered = now
                if workers or not self.waiting:
                    has_workers = now
            if now - answered >= self.scheduler_timeout:
                self._lose(
                    f"the dask scheduler at {self.where} has not answered for {self.scheduler_timeout:g} s"
                )
            elif now - has_workers >= self.no_workers_timeout:
                self._lose(
                    f"the dask cluster at {self.where} has had no worker for {self.no_workers_timeout:g} s"
                )

    async def until_lost(self, work: Awaitable[T]) -> T:
        """``work``'s result, or ``ExecutorLost`` as soon as the cluster is lost (``work`` is dropped)."""
        task = asyncio.ensure_future(work)
        gone = asyncio.ensure_future(self._gone.wait())
        self.waiting += 1
        try:
            await asyncio.wait({task, gone}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            self.waiting -= 1
            gone.cancel()
            if not task.done():
                task.cancel()
        if task.done() and not task.cancelled():
            return task.result()
        raise ExecutorLost(self.lost or "the dask cluster went away")

    async def confirm_lost(self) -> bool:
        """After the scheduler cancelled an episode: is that because the scheduler itself is gone?"""
        if self.lost is None and await self._workers() is None:
            self._lose(f"the dask scheduler at {self.where} went away")
        return self.lost is not None

    def _lose(self, why: str) -> None:
        self.lost = why
        self._gone.set()

    async def _workers(self) -> int | None:
        """How many workers the scheduler has, or None when it does not answer in time."""
        with contextlib.suppress(Exception):
            identity = await asyncio.wait_for(self.client.scheduler.identity(), 2 * HEARTBEAT_S)
            return len(identity.get("workers") or {})
        return None


def _seconds(key: str, default: str) -> float:
    return float(parse_timedelta(dask.config.get(f"coder_eval.{key}", default)))
