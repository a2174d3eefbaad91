"""The ``dask`` executor: episodes run on dask.distributed workers; this process writes the run directory.

Example::

    async with open_dask(slots=4) as executor:                      # a LocalCluster, 4 processes
        end = await executor.run(plan, run_id, run.episode_path(plan.episode_id))
    async with open_dask(scheduler="tcp://10.0.0.5:8786") as executor:  # a cluster already running
        ...

Before the first episode, every worker is asked whether it can run the run (``worker_check.py``).
Each episode is one dask task: ``run_on_worker`` (``dask_worker.py``) unpacks the task's folder
from its bundle (``bundles.py``, fetched from the scheduler once per worker, ``bundle_sender.py``),
runs ``run_episode`` on the worker's event loop in a scratch folder, streams the trajectory's lines
back as they are written (``live_lines.py``) and returns the files' bytes (trajectory, failed
attempts, kept snapshot), which :meth:`DaskExecutor.run` writes whole where the run directory wants
them. A worker that dies mid-episode: the scheduler runs the episode once more elsewhere
(``allowed_failures=1`` on the cluster coder_eval starts; a running cluster keeps its own setting);
a further death, or any error raised on the worker, is recorded as an ``invalid`` episode
(``infra_error``, the harness's: ``--resume`` runs it again) saying so. Either way the episode ends
up in the run directory exactly once. A scheduler that stops answering, or a cluster with no worker
left, ends the run (``cluster_watch.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import importlib.util
import logging
import signal
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import dask.config
from distributed import Client, LocalCluster, WorkerPlugin
from distributed.client import FutureCancelledError
from distributed.comm.addressing import resolve_address
from distributed.scheduler import KilledWorker

from coder_eval.episode.plan import EpisodePlan
from coder_eval.episode.snapshots import SnapshotTarget
from coder_eval.errors import ExecutorLost, InputError, RunWriteError
from coder_eval.executors.dask.bundle_sender import FETCH_TOPIC, BundleSender, recorded_hash
from coder_eval.executors.dask.cluster_watch import ClusterWatch
from coder_eval.executors.dask.episode_files import EpisodeFiles, write_interrupted
from coder_eval.executors.dask.live_lines import LINES_TOPIC, LiveFiles
from coder_eval.executors.dask.worker import STARTS_TOPIC, cancel_on_worker, run_on_worker
from coder_eval.executors.dask.worker_check import admit
from coder_eval.sandbox.layout import sandbox_root
from coder_eval.sandbox.leftovers import reap_dead
from coder_eval.trajectory import EpisodeEnd

ALLOWED_FAILURES = 1
"""Worker deaths an episode survives on the cluster coder_eval starts: it is re-run once."""

CANCEL_TIMEOUT_S = 10.0
CONNECT_TIMEOUT_S = 5.0
"""How long ``--scheduler`` may take to answer before the run is refused."""

QUIET_CLUSTER = {
    "distributed.worker.profile.enabled": False,
    "distributed.admin.system-monitor.interval": "2s",
    "distributed.admin.tick.interval": "200ms",
}
"""The LocalCluster coder_eval starts runs a few long episodes, not millions of tiny tasks: its workers
do not sample their own stacks every 10 ms (for the dashboard's profile page), and no process checks
its event loop every 20 ms or its memory and CPU every 0.5 s. At rest that left 10-15 % of a core
busy on a 4-worker cluster; the episodes get it back. A running cluster (``--scheduler``) keeps its
own configuration."""


class DaskExecutor:
    """Submits each episode to the cluster and writes what the worker returns."""

    def __init__(self, client: Client, dashboard: str | None, watch: ClusterWatch) -> None:
        self.client = client
        self.dashboard = dashboard
        self.watch = watch
        self.bundles = BundleSender(client)
        self.live = LiveFiles()
        self.abandoned: set[str] = set()
        self.starts: Counter[str] = Counter()

    def count_start(self, event: tuple[float, str]) -> None:
        """An episode started on a worker (events arrive before the episode's result)."""
        self.starts[event[1]] += 1

    async def admit(self, plans: Sequence[EpisodePlan]) -> None:
        await admit(self.client, plans, self.watch.where)

    async def run(
        self, plan: EpisodePlan, run_id: str, path: Path, keep: SnapshotTarget | None = None
    ) -> EpisodeEnd:
        key = f"episode-{plan.episode_id}-{uuid.uuid4().hex[:8]}"
        keep_bytes = keep.max_bytes if keep is not None else None
        recorded = await recorded_hash(plan)
        self.live.open(key, path, recorded)
        try:
            sent = await self.bundles.send(plan)
            files: EpisodeFiles | None = await self._submit(key, sent, run_id, keep_bytes)
        except FutureCancelledError as exc:  # the scheduler dropped it (say the connection was lost)
            if await self.watch.confirm_lost():
                self._interrupted(plan, run_id, path, key)
                raise ExecutorLost(self.watch.lost or "the dask scheduler went away") from exc
            error = f"the dask scheduler cancelled the episode: {exc}"
        except (asyncio.CancelledError, ExecutorLost):  # the run stops: the episode stays, as interrupted
            self._interrupted(plan, run_id, path, key)
            raise
        except KilledWorker as exc:
            error = _killed(exc)
        except Exception as exc:
            error = f"on the dask worker: {type(exc).__name__}: {exc}"
        else:
            if files is not None:
                files = files.with_task_hash(recorded)
                return self._note_reruns(key, files).write(path, keep)
            error = "the episode was cancelled on its dask worker"
        return EpisodeFiles.failed(plan, run_id, error).write(path)

    async def _submit(
        self, key: str, plan: EpisodePlan, run_id: str, keep_bytes: int | None
    ) -> EpisodeFiles | None:
        """The episode's files from the worker that ran it; its streamed lines stop first."""
        try:
            return await self.watch.until_lost(
                self.client.submit(run_on_worker, plan, run_id, key, keep_bytes, key=key, pure=False)
            )
        finally:
            self.live.close(key)

    def _interrupted(self, plan: EpisodePlan, run_id: str, path: Path, key: str) -> None:
        self.abandoned.add(key)
        with contextlib.suppress(RunWriteError):  # the run is stopping: what it can keep, it keeps
            write_interrupted(plan, run_id, path)

    def _note_reruns(self, key: str, files: EpisodeFiles) -> EpisodeFiles:
        reruns = self.starts.pop(key, 1) - 1
        if reruns < 1:
            return files
        return files.noted(
            f"run {reruns + 1} times: the dask worker running it died {reruns} time(s); "
            "this is the run that finished"
        )

    async def cancel_abandoned(self) -> None:
        """Stop the episodes of an interrupted run on the workers still running them (a lost
        cluster is not asked: its workers, if any, stop them as they lose it)."""
        if self.abandoned and self.watch.lost is None:
            with contextlib.suppress(Exception):
                run = self.client.run(cancel_on_worker, sorted(self.abandoned), on_error="ignore")
                await asyncio.wait_for(run, CANCEL_TIMEOUT_S)


def _killed(exc: KilledWorker) -> str:
    worker = getattr(exc.last_worker, "address", "?")
    return (
        f"the dask worker running this episode died ({worker}), after {exc.allowed_failures} "
        "re-run(s) elsewhere; the agent was not measured"
    )


HEARTBEAT_FAILED = "Failed to communicate with scheduler during heartbeat."
"""What a dask worker logs, with the traceback of the comm's error, when a heartbeat goes unanswered."""


class _HeartbeatFailureInOneLine(logging.Filter):
    """Drops the traceback of a failed heartbeat and keeps its line."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.msg == HEARTBEAT_FAILED:
            record.exc_info, record.exc_text = None, None
        return True


def heartbeat_failures_in_one_line() -> None:
    """On a worker of the LocalCluster coder_eval starts: its scheduler lives in the submitter's process,
    so a heartbeat fails only as that process stops the run (a heartbeat in flight as the scheduler
    removes the worker: a race distributed itself logs with a traceback, which Ctrl-C would print).
    The line is kept; the traceback is not. Idempotent."""
    logger = logging.getLogger("distributed.worker")
    if not any(isinstance(f, _HeartbeatFailureInOneLine) for f in logger.filters):
        logger.addFilter(_HeartbeatFailureInOneLine())


class _EpisodeWorker(WorkerPlugin):
    """Readies each worker, and each that replaces a dead one: sandboxes and agent processes a dead
    worker left on its machine are reaped; on the cluster coder_eval starts, Ctrl-C (which reaches
    the whole process group) is left to the submitter, which stops the run in order, and a heartbeat
    that fails as it does so is logged in one line."""

    def __init__(self, ignore_interrupts: bool) -> None:
        self.ignore_interrupts = ignore_interrupts

    def setup(self, worker: Any) -> None:
        if self.ignore_interrupts:
            with contextlib.suppress(ValueError):  # not the main thread: nothing to protect
                signal.signal(signal.SIGINT, signal.SIG_IGN)
            heartbeat_failures_in_one_line()
        reap_dead(sandbox_root())


@asynccontextmanager
async def open_dask(
    slots: int = 1, scheduler: str | None = None, slots_per_worker: int = 1
) -> AsyncIterator[DaskExecutor]:
    """A client of the cluster at ``scheduler``, or of a LocalCluster of ``slots`` processes
    (``slots_per_worker`` episodes each) started here and stopped on exit."""
    async with AsyncExitStack() as stack:
        if scheduler is None:
            with dask.config.set(QUIET_CLUSTER):  # read as the scheduler and each worker start
                cluster = await stack.enter_async_context(_local_cluster(slots, slots_per_worker))
            client = await stack.enter_async_context(Client(cluster, asynchronous=True))  # type: ignore[no-untyped-call]
        else:
            client = await stack.enter_async_context(_connect(scheduler))
        await client.register_plugin(_EpisodeWorker(scheduler is None), name="coder_eval-worker")
        await client.run(importlib.import_module, "coder_eval.executors.dask.episode_files")
        watch = ClusterWatch(client, scheduler or "the LocalCluster coder_eval started")
        executor = DaskExecutor(client, _dashboard(client, local=scheduler is None), watch)
        topics = {
            STARTS_TOPIC: executor.count_start,
            LINES_TOPIC: executor.live.receive,
            FETCH_TOPIC: executor.bundles.count_fetch,
        }
        for topic, handler in topics.items():
            client.subscribe_topic(topic, handler)
        watching = asyncio.ensure_future(watch.watch())
        try:
            yield executor
        finally:
            watching.cancel()
            await executor.cancel_abandoned()
            # before this client goes: a stopped episode's last lines, sent as its worker winds it
            # down, must find no subscriber rather than a closed connection (a logged traceback)
            for topic in topics:
                with contextlib.suppress(Exception):
                    client.unsubscribe_topic(topic)


def _local_cluster(workers: int, slots_per_worker: int) -> LocalCluster:
    return LocalCluster(  # type: ignore[no-untyped-call]
        n_workers=workers,
        threads_per_worker=slots_per_worker,
        processes=True,
        asynchronous=True,
        memory_limit=0,  # episodes are bounded by their sandboxes; dask must not restart a worker for it
        dashboard_address=":0",  # any free port: another cluster on this machine may hold 8787
        scheduler_kwargs={"allowed_failures": ALLOWED_FAILURES},
    )


def _connect(scheduler: str) -> Client:
    return Client(scheduler, asynchronous=True, timeout=CONNECT_TIMEOUT_S)  # type: ignore[no-untyped-call]


async def check_scheduler(scheduler: str) -> None:
    """Raise ``InputError`` unless a dask scheduler answers at ``scheduler`` (before anything runs)."""
    try:
        resolve_address(scheduler)
    except ValueError as exc:
        raise InputError(f"--scheduler {scheduler}: not a dask address like tcp://HOST:8786 ({exc})") from exc
    except OSError as exc:
        raise InputError(f"--scheduler {scheduler}: its host is not known here ({exc})") from exc
    try:
        async with _connect(scheduler):
            pass
    except (OSError, TimeoutError) as exc:
        why = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise InputError(
            f"--scheduler {scheduler}: no dask scheduler answered within {CONNECT_TIMEOUT_S:g} s ({why})"
        ) from exc


def _dashboard(client: Client, local: bool) -> str | None:
    """The dashboard's address, when the scheduler serves one (ours needs bokeh to draw it)."""
    if local and importlib.util.find_spec("bokeh") is None:
        return None
    services = client.scheduler_info().get("services", {})
    return str(client.dashboard_link) if "dashboard" in services else None
