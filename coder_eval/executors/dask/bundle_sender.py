"""Task bundles onto a dask cluster: each task folder packed once and left with the scheduler, from
which each worker fetches it the first time it needs it.

Example::

    sender = BundleSender(client)
    plan = await sender.send(plan)               # plan.bundle is the hash; the scheduler has the bytes
    client.submit(run_on_worker, plan, run_id, key)
    data = await fetch(worker, plan.bundle)      # on a worker whose cache lacks it

The bytes are stored in the scheduler's task metadata under their content address
(``coder_eval-bundles/<sha256>``: the same folder is one copy, whichever run sent it), and a worker
asks the scheduler for them over dask's own connection, once per worker (then it has them in its
cache by hash). Not as a scattered dask future that each episode depends on: a scattered value
lives on the workers that hold it, so a worker that died holding the only copy would take every
later episode of its task with it; the scheduler's copy outlives any worker, and a worker that
replaces a dead one fetches it again. Each fetch is logged as a dask event, so the submitter counts
the bytes moved. The scheduler keeps each bundle while it runs (a few kilobytes to megabytes each).
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path
from typing import Any

from coder_eval.episode.plan import EpisodePlan
from coder_eval.executors.dask.bundles import Bundle, BundleError, pack
from coder_eval.task.files import task_hash

METADATA = "coder_eval-bundles"
FETCH_TOPIC = "coder_eval-bundle-fetch"


class BundleSender:
    """The bundles of one run's task folders, packed and handed to the scheduler once each."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self._sent: dict[Path, asyncio.Task[Bundle]] = {}
        self.fetched_bytes = 0
        """Bundle bytes the workers fetched so far (each fetch is one worker's first need of it)."""

    async def send(self, plan: EpisodePlan) -> EpisodePlan:
        """``plan`` naming its task's bundle (as it is: a task with no folder, built in Python,
        travels whole in its plan). A run packed it when it was planned (``plan.frozen``); a plan
        made otherwise is packed here, once per folder."""
        if plan.task.source_path is None:
            return plan
        folder = plan.task.source_dir
        if folder not in self._sent:
            frozen = plan.frozen.bundle_file if plan.frozen is not None else None
            packed = (plan.bundle, frozen) if plan.bundle is not None and frozen is not None else None
            self._sent[folder] = asyncio.ensure_future(self._store(folder, packed))
        bundle = await self._sent[folder]
        return replace(plan, bundle=bundle.sha256)

    def sizes(self) -> dict[str, int]:
        """Each bundle sent so far: its hash and its size in bytes."""
        return {b.sha256: len(b.data) for b in (t.result() for t in self._sent.values() if t.done())}

    def count_fetch(self, event: tuple[float, dict[str, Any]]) -> None:
        """A worker fetched a bundle (a ``FETCH_TOPIC`` event)."""
        self.fetched_bytes += int(event[1].get("bytes", 0))

    async def _store(self, folder: Path, packed: tuple[str, Path] | None) -> Bundle:
        if packed is None:
            bundle = await asyncio.to_thread(pack, folder)
        else:
            bundle = Bundle(packed[0], await asyncio.to_thread(packed[1].read_bytes))
        await self.client.scheduler.set_metadata(keys=[METADATA, bundle.sha256], value=bundle.data)
        return bundle


async def fetch(worker: Any, sha256: str) -> bytes:
    """On a worker: the bytes of bundle ``sha256``, from the scheduler."""
    data = await worker.scheduler.get_metadata(keys=[METADATA, sha256], default=None)
    if not isinstance(data, bytes):
        raise BundleError(f"task bundle {sha256[:12]}: the dask scheduler does not have it (restarted?)")
    worker.log_event(FETCH_TOPIC, {"bundle": sha256, "bytes": len(data)})
    return data


async def recorded_hash(plan: EpisodePlan) -> str:
    """The task's hash as a run here records it: the hash of the files frozen when it was planned,
    else of its files where this process sees them."""
    if plan.frozen is not None:
        return plan.frozen.task_hash
    return await asyncio.to_thread(task_hash, plan.task)
