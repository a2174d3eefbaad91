"""The dask executor against the local one at equal concurrency, on an I/O-bound agent.

Run: ``python benchmarks/executor_scaling.py [--episodes 64] [--trials 3] [--driver tempdir]``.
Every episode is a ``command`` agent running ``sleep 1`` and one file check. The same plans run
through ``run_batch`` with the ``local`` executor at ``-j 16`` and with the ``dask`` executor on a
LocalCluster of 4 worker processes × 4 slots (started once, its start-up timed apart), trials
alternating so drift on a shared machine hits both. Prints, as medians over the trials:

- episodes/s of each, and their ratio (the target: dask within 10 % of local);
- slot time per episode: ``wall × 16 / episodes − 1 s``, what an episode holds a slot for beyond
  its agent's sleep (sandbox, grading, trajectory, and for dask the round trip). Dask's minus
  local's is what choosing dask adds to each episode at equal concurrency (the target: at most
  20 ms);
- round trip per episode: the time ``executor.run`` took in the submitting process minus the
  episode's own ``total_s`` measured where it ran (dask: pickling, scheduling, shipping the
  trajectory back, writing it), at ``-j 16`` and, on 8 episodes run one at a time, at ``-j 1``.
  Under ``local`` an episode's waits for the shared event loop fall inside its ``total_s``; under
  dask its waits for the cluster's processes fall outside, so at ``-j 16`` this is not an extra cost
  beside the slot time but a part of it;
- CPU per episode: every process involved (this one, dask's workers, the episodes' commands).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import pickle
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager, AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path

import psutil  # type: ignore[import-untyped]  # (no type stubs; installed with dask)

from coder_eval.episode.plan import EpisodePlan, plan_episodes
from coder_eval.episode.snapshots import SnapshotTarget
from coder_eval.executors import Executor, open_executor
from coder_eval.executors.dask.executor import DaskExecutor, open_dask
from coder_eval.run.batch import run_batch
from coder_eval.run_dir import RunDir, RunManifest
from coder_eval.task import load_tasks
from coder_eval.trajectory import EpisodeEnd

SLOTS = 16
WORKERS = 4
SLEEP_S = 1.0
TASK = """
task_id: sleeper
initial_prompt: wait, then write ok to ok.txt
sandbox: {{driver: {driver}}}
agent: {{kind: command, command: "sleep {sleep}; echo ok > ok.txt"}}
success_criteria: [{{type: file_contains, path: ok.txt, includes: [ok]}}]
"""


@dataclass
class Timed:
    """An executor whose every ``run`` is timed against the episode's own ``total_s``."""

    inner: Executor
    overheads: list[float] = field(default_factory=list)

    @property
    def dashboard(self) -> str | None:
        return self.inner.dashboard

    sent: int = 0
    """Bytes of the plans handed to the executor (pickled, as dask sends them)."""
    returned: int = 0
    """Bytes of the files each episode left in the run directory (as dask hands them back)."""

    async def admit(self, plans: Sequence[EpisodePlan]) -> None:
        await self.inner.admit(plans)

    async def run(
        self, plan: EpisodePlan, run_id: str, path: Path, keep: SnapshotTarget | None = None
    ) -> EpisodeEnd:
        started = time.perf_counter()
        end = await self.inner.run(plan, run_id, path, keep)
        self.overheads.append(time.perf_counter() - started - end.timings.total_s)
        self.sent += len(pickle.dumps(plan))
        self.returned += sum(p.stat().st_size for p in path.parent.glob(f"{path.name}*"))
        return end


@dataclass(frozen=True)
class Trial:
    wall_s: float
    overhead_s: float
    passed: int
    cpu_s: float = 0.0
    bytes_per_episode: float = 0.0
    """Plans out and files back, per episode (bundles are counted apart)."""


def cpu_seconds(left_out: frozenset[int] = frozenset()) -> float:
    """CPU time of this process, its live descendants (dask's workers) but ``left_out`` (another
    executor's), and the children each reaped."""
    processes = [psutil.Process(), *psutil.Process().children(recursive=True)]
    processes = [p for p in processes if p.pid not in left_out]
    total = 0.0
    for process in processes:
        with contextlib.suppress(psutil.Error):
            times = process.cpu_times()
            total += times.user + times.system + times.children_user + times.children_system
    return total


async def one_trial(
    executor: Executor,
    plans: list[EpisodePlan],
    root: Path,
    name: str,
    concurrency: int = SLOTS,
    left_out: frozenset[int] = frozenset(),
) -> Trial:
    run = RunDir.create(root, RunManifest(run_id=name))
    timed = Timed(executor)
    cpu = cpu_seconds(left_out)
    started = time.perf_counter()
    summary = await run_batch(plans, run, run_id=name, concurrency=concurrency, executor=timed)
    wall = time.perf_counter() - started
    spent = cpu_seconds(left_out) - cpu
    moved = (timed.sent + timed.returned) / len(plans)
    return Trial(wall, statistics.median(timed.overheads), summary.outcomes["pass"], spent, moved)


def local(_: Path) -> AbstractAsyncContextManager[Executor]:
    return open_executor("local")


def dask(_: Path) -> AbstractAsyncContextManager[Executor]:
    return open_dask(slots=WORKERS, slots_per_worker=SLOTS // WORKERS)


@contextlib.asynccontextmanager
async def hosts(root: Path) -> AsyncIterator[Executor]:
    """``WORKERS`` worker hosts of ``SLOTS // WORKERS`` slots and a scheduler, each in a filesystem of
    its own with no view of the suite (the executor tests' separate hosts)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the executor tests' builders
    from tests.executors.hosts import separate_hosts

    with separate_hosts(root / "hosts", workers=WORKERS, nthreads=SLOTS // WORKERS) as cluster:
        async with open_dask(scheduler=cluster.address) as executor:
            yield executor


OPENERS: dict[str, Callable[[Path], AbstractAsyncContextManager[Executor]]] = {
    "local": local,
    "dask": dask,
    "hosts": hosts,
}


@dataclass(frozen=True)
class Measured:
    startup_s: float
    trials: dict[int, list[Trial]]
    """By ``-j``."""
    alone: Trial
    """``SEQUENTIAL`` episodes one at a time: the executor's overhead on an idle machine."""
    bundles_b: float = 0.0
    """Bundle bytes the workers fetched, per episode run on them."""
    first_s: float = 0.0
    """What the first episode of a new bundle on a worker costs beyond the next one of it."""


SEQUENTIAL = 8
NEW_BUNDLES = 5


async def measure(
    plans: list[EpisodePlan], root: Path, count: int, names: list[str], jobs: list[int], bundle_kb: int
) -> dict[str, Measured]:
    """The executors opened (start-up timed) and warmed up once, then their trials alternate."""
    async with AsyncExitStack() as stack:
        executors: dict[str, Executor] = {}
        startups: dict[str, float] = {}
        for name in names:
            started = time.perf_counter()
            executors[name] = await stack.enter_async_context(OPENERS[name](root))
            startups[name] = time.perf_counter() - started
            await one_trial(
                executors[name], plans[:SLOTS], root / "runs", f"{name}-warm-up"
            )  # imports, caches
        workers = frozenset(p.pid for p in psutil.Process().children(recursive=True))
        left_out = {name: workers if name == "local" else frozenset[int]() for name in names}
        done: dict[str, dict[int, list[Trial]]] = {name: {j: [] for j in jobs} for name in names}
        for number in range(count):
            for j in jobs:
                for name, executor in executors.items():
                    trial = await one_trial(
                        executor, plans, root / "runs", f"{name}-{j}-{number}", j, left_out[name]
                    )
                    done[name][j].append(trial)
        alone = {
            name: await one_trial(executor, plans[:SEQUENTIAL], root / "runs", f"{name}-alone", concurrency=1)
            for name, executor in executors.items()
        }
        ran = SLOTS + len(plans) * count * len(jobs) + SEQUENTIAL
        costs = {
            name: (await bundle_bytes(executor) / ran, await first_episode(executor, root, name, bundle_kb))
            for name, executor in executors.items()
            if isinstance(executor, DaskExecutor)
        }
    return {
        name: Measured(startups[name], done[name], alone[name], *costs.get(name, (0.0, 0.0)))
        for name in names
    }


async def bundle_bytes(executor: DaskExecutor) -> float:
    """Bundle bytes the workers fetched from the scheduler (each worker once per bundle)."""
    await asyncio.sleep(1)  # the last fetch events reach this process
    return float(executor.bundles.fetched_bytes)


async def first_episode(executor: DaskExecutor, root: Path, name: str, bundle_kb: int) -> float:
    """Median, over ``NEW_BUNDLES`` task folders never seen (each padded with ``bundle_kb`` KB of
    random bytes), of the first episode's round trip minus the second's, one at a time: packing,
    sending and unpacking the bundle."""
    extra: list[float] = []
    for number in range(NEW_BUNDLES):
        folder = root / f"new-{name}-{number}"
        folder.mkdir()
        (folder / "pad.bin").write_bytes(os.urandom(bundle_kb * 1024))
        (folder / "sleeper.yaml").write_text(TASK.format(driver="tempdir", sleep=0))
        pair = plan_episodes(load_tasks([folder]), repeats=2)
        timed = Timed(executor)
        run = RunDir.create(root / "runs", RunManifest(run_id=f"{name}-new-{number}"))
        await run_batch(pair, run, run_id=run.path.name, concurrency=1, executor=timed)
        extra.append(timed.overheads[0] - timed.overheads[1])
    return statistics.median(extra)


@dataclass(frozen=True)
class Summary:
    rate: float
    slot_s: float
    round_trip_s: float
    cpu_s: float


def report(name: str, measured: Measured, episodes: int, jobs: int) -> Summary:
    done, startup = measured.trials[jobs], measured.startup_s
    wall = statistics.median(t.wall_s for t in done)
    rate = episodes / wall
    slot = wall * jobs / episodes - SLEEP_S
    round_trip = statistics.median(t.overhead_s for t in done)
    cpu = statistics.median(t.cpu_s for t in done) / episodes
    passed = min(t.passed for t in done)
    print(
        f"{name:>5} -j {jobs:<2}: {rate:6.2f} episodes/s  wall {wall:5.2f} s  slot time {slot * 1000:6.1f} ms"
        f"  round trip {round_trip * 1000:5.1f} ms (-j 1: {measured.alone.overhead_s * 1000:4.1f})"
        f"  CPU {cpu * 1000:5.1f} ms/episode  start-up {startup:4.2f} s  passed {passed}/{episodes}"
    )
    return Summary(rate, slot, round_trip, cpu)


def report_bytes(name: str, measured: Measured, bundle_kb: int) -> None:
    moved = statistics.median(t.bytes_per_episode for ts in measured.trials.values() for t in ts)
    print(
        f"{name:>5}: {moved / 1024:6.1f} KB/episode of plan and results, "
        f"{measured.bundles_b / 1024:6.2f} KB/episode of bundles; "
        f"a new bundle's first episode ({bundle_kb} KB of files) costs "
        f"{measured.first_s * 1000:5.1f} ms more than the next"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=64)
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--driver", default="tempdir", help="tempdir (default), bwrap or auto")
    parser.add_argument("--jobs", type=int, nargs="+", default=[SLOTS], help=f"-j values, each <= {SLOTS}")
    parser.add_argument("--hosts", action="store_true", help="also a cluster of separate hosts (bwrap)")
    parser.add_argument("--bundle-kb", type=int, default=256, help="files in the new bundles measured")
    args = parser.parse_args()
    names = ["local", "dask", *(["hosts"] if args.hosts else [])]
    with tempfile.TemporaryDirectory(prefix="coder_eval-bench-") as folder:
        root = Path(folder)
        task = root / "tasks" / "sleeper.yaml"
        task.parent.mkdir()
        task.write_text(TASK.format(driver=args.driver, sleep=SLEEP_S))
        plans = plan_episodes(load_tasks([task]), repeats=args.episodes)
        results = asyncio.run(measure(plans, root, args.trials, names, args.jobs, args.bundle_kb))
    print(
        f"{args.episodes} episodes of `sleep {SLEEP_S:g}` ({args.driver} driver); medians of {args.trials} "
        f"trials; dask and hosts: {WORKERS} workers × {SLOTS // WORKERS} slots"
    )
    for jobs in args.jobs:
        summaries = {name: report(name, results[name], args.episodes, jobs) for name in names}
        for name in names[1:]:
            ratio = summaries[name].rate / summaries["local"].rate
            print(
                f"{name} / local at -j {jobs}: {ratio:.3f} episodes/s; "
                f"adds {(summaries[name].slot_s - summaries['local'].slot_s) * 1000:.1f} ms of slot time, "
                f"{(summaries[name].cpu_s - summaries['local'].cpu_s) * 1000:.1f} ms of CPU per episode"
            )
    for name in names[1:]:
        report_bytes(name, results[name], args.bundle_kb)


if __name__ == "__main__":
    main()
