"""The worker's side of the ``dask`` executor: one episode, run where its task's folder was unpacked.

Example::

    client.submit(run_on_worker, plan, run_id, key, keep_bytes, key=key, pure=False)
    client.run(cancel_on_worker, [key])   # the submitter stopped the run

:func:`run_on_worker` fetches the task's bundle from the scheduler unless the worker's cache holds it
(``bundle_sender.py``), unpacks it there (``bundles.py``), runs
``run_episode`` in a scratch folder of the worker's own, streams the trajectory's lines to the
submitter as they are written (``live_lines.py``) and returns the episode's files, naming the task's
folder as the submitter does. Each start is logged as a dask event, so a re-run is noted.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
import uuid
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

import dask.config
from distributed import get_worker

from coder_eval.episode.plan import EpisodePlan
from coder_eval.executors.dask.bundle_sender import fetch
from coder_eval.executors.dask.bundles import relocated, unpack
from coder_eval.executors.dask.episode_files import EpisodeFiles
from coder_eval.executors.dask.live_lines import LINES_TOPIC, send_lines

STARTS_TOPIC = "coder_eval-episode-start"
"""Each start of an episode on a worker is logged here, so a re-run after a worker died is noted."""

_RUNNING: dict[str, asyncio.Task[EpisodeFiles]] = {}
"""On a worker: the episodes it is running, by dask key (so an interrupted run can cancel them)."""


async def run_on_worker(
    plan: EpisodePlan, run_id: str, key: str, keep_bytes: int | None = None
) -> EpisodeFiles | None:
    """On a worker: run the episode in a scratch folder of the worker's own, its task's folder
    unpacked from the bundle ``plan.bundle`` names, and return its files, which name the
    task's folder as the submitter does (None: the submitter stopped the run and cancelled it, see
    :func:`cancel_on_worker`)."""
    worker = get_worker()
    worker.log_event(STARTS_TOPIC, key)
    scratch = Path(tempfile.mkdtemp(prefix="coder_eval-episode-", dir=worker.local_directory))
    lines: asyncio.Future[None] | None = None
    try:
        here = plan
        if plan.bundle is not None:
            here = relocated(plan, await _unpacked(worker, plan.bundle))
        folder, copy = str(plan.task.source_dir).encode(), str(here.task.source_dir).encode()
        lines = asyncio.ensure_future(
            _stream(worker, key, scratch / f"{plan.episode_id}.jsonl", copy, folder)
        )
        episode = _RUNNING[key] = asyncio.ensure_future(
            EpisodeFiles.produce(here, run_id, scratch, keep_bytes)
        )
        files = await episode
        return files.rebased(copy.decode(), folder.decode())
    except asyncio.CancelledError:
        if _cancelling():  # the worker itself is closing
            raise
        return None
    finally:
        _RUNNING.pop(key, None)
        if lines is not None:
            lines.cancel()
            await asyncio.gather(lines, return_exceptions=True)
        shutil.rmtree(scratch, ignore_errors=True)


def _stream(worker: Any, key: str, path: Path, copy: bytes, folder: bytes) -> Coroutine[Any, Any, None]:
    """The episode's lines to the submitter as they are written, naming the task's folder as it does."""
    attempt = uuid.uuid4().hex

    def send(data: bytes) -> None:
        worker.log_event(LINES_TOPIC, {"key": key, "attempt": attempt, "lines": data})

    return send_lines(path, send, lambda data: data.replace(copy, folder))


_FETCHING: dict[str, asyncio.Lock] = {}
"""On a worker: one fetch of each bundle at a time (its episodes starting together wait for it)."""


async def _unpacked(worker: Any, sha256: str) -> Path:
    """The worker's copy of bundle ``sha256``, fetched and unpacked the first time it is needed."""
    cache = bundle_cache(worker)
    async with _FETCHING.setdefault(sha256, asyncio.Lock()):
        if not (cache / sha256).is_dir():
            data = await fetch(worker, sha256)
            await asyncio.to_thread(unpack, sha256, data, cache)
    return cache / sha256


def bundle_cache(worker: Any) -> Path:
    """Where a worker keeps the task bundles it was sent, by hash: ``coder_eval.bundle-cache`` in
    dask's configuration (a folder kept across runs), else the worker's own scratch folder."""
    configured = dask.config.get("coder_eval.bundle-cache", None)
    return Path(configured) if configured else Path(worker.local_directory) / "coder_eval-bundles"


def _cancelling() -> bool:
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


async def cancel_on_worker(keys: list[str]) -> int:
    """On a worker: cancel those of ``keys`` it is running (their agents' processes are killed)."""
    running = [task for key in keys if (task := _RUNNING.get(key)) is not None]
    for task in running:
        task.cancel()
    await asyncio.gather(*running, return_exceptions=True)
    return len(running)
