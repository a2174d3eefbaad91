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
import statistics
import tempfile
import time
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager, AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path

import psutil  # type: ignore[import-untyped]  # (no type stubs; installed with dask)

from coder_eval.episode_plan import EpisodePlan, plan_episodes
from coder_eval.executors import Executor, open_executor
from coder_eval.executors.dask import open_dask
from coder_eval.run.batch import run_batch
from coder_eval.run_dir import RunDir, RunManifest
from coder_eval.snapshots import SnapshotTarget
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

    async def run(
        self, plan: EpisodePlan, run_id: str, path: Path, keep: SnapshotTarget | None = None
    ) -> EpisodeEnd:
        started = time.perf_counter()
        end = await self.inner.run(plan, run_id, path, keep)
        self.overheads.append(time.perf_counter() - started - end.timings.total_s)
        return end


@dataclass(frozen=True)
class Trial:
    wall_s: float
    overhead_s: float
    passed: int
    cpu_s: float = 0.0


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
    return Trial(wall, statistics.median(timed.overheads), summary.outcomes["pass"], spent)


def local() -> AbstractAsyncContextManager[Executor]:
    return open_executor("local")


def dask() -> AbstractAsyncContextManager[Executor]:
    return open_dask(workers=WORKERS, slots_per_worker=SLOTS // WORKERS)


OPENERS: dict[str, Callable[[], AbstractAsyncContextManager[Executor]]] = {"local": local, "dask": dask}


@dataclass(frozen=True)
class Measured:
    startup_s: float
    trials: list[Trial]
    alone: Trial
    """``SEQUENTIAL`` episodes one at a time: the executor's overhead on an idle machine."""


SEQUENTIAL = 8


async def measure(plans: list[EpisodePlan], root: Path, count: int) -> dict[str, Measured]:
    """Both executors opened (start-up timed) and warmed up once, then their trials alternate."""
    async with AsyncExitStack() as stack:
        executors: dict[str, Executor] = {}
        startups: dict[str, float] = {}
        for name, opener in OPENERS.items():
            started = time.perf_counter()
            executors[name] = await stack.enter_async_context(opener())
            startups[name] = time.perf_counter() - started
            await one_trial(executors[name], plans[:SLOTS], root, f"{name}-warm-up")  # imports, caches
        workers = frozenset(p.pid for p in psutil.Process().children(recursive=True))
        left_out = {"local": workers, "dask": frozenset[int]()}  # local's CPU leaves dask's idle workers out
        done: dict[str, list[Trial]] = {name: [] for name in OPENERS}
        for number in range(count):
            for name, executor in executors.items():
                trial = await one_trial(executor, plans, root, f"{name}-{number}", left_out=left_out[name])
                done[name].append(trial)
        alone = {
            name: await one_trial(executor, plans[:SEQUENTIAL], root, f"{name}-alone", concurrency=1)
            for name, executor in executors.items()
        }
    return {name: Measured(startups[name], done[name], alone[name]) for name in OPENERS}


@dataclass(frozen=True)
class Summary:
    rate: float
    slot_s: float
    round_trip_s: float
    cpu_s: float


def report(name: str, measured: Measured, episodes: int) -> Summary:
    done, startup = measured.trials, measured.startup_s
    wall = statistics.median(t.wall_s for t in done)
    rate = episodes / wall
    slot = wall * SLOTS / episodes - SLEEP_S
    round_trip = statistics.median(t.overhead_s for t in done)
    cpu = statistics.median(t.cpu_s for t in done) / episodes
    passed = min(t.passed for t in done)
    print(
        f"{name:>5}: {rate:6.2f} episodes/s  wall {wall:5.2f} s  slot time {slot * 1000:6.1f} ms"
        f"  round trip {round_trip * 1000:5.1f} ms (-j 1: {measured.alone.overhead_s * 1000:4.1f})"
        f"  CPU {cpu * 1000:5.1f} ms/episode  start-up {startup:4.2f} s  passed {passed}/{episodes}"
    )
    return Summary(rate, slot, round_trip, cpu)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=64)
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--driver", default="tempdir", help="tempdir (default), bwrap or auto")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="coder_eval-bench-") as folder:
        root = Path(folder)
        task = root / "tasks" / "sleeper.yaml"
        task.parent.mkdir()
        task.write_text(TASK.format(driver=args.driver, sleep=SLEEP_S))
        plans = plan_episodes(load_tasks([task]), repeats=args.episodes)
        results = asyncio.run(measure(plans, root / "runs", args.trials))
    print(
        f"{args.episodes} episodes of `sleep {SLEEP_S:g}` ({args.driver} driver), -j {SLOTS}; "
        f"medians of {args.trials} trials; dask: {WORKERS} workers × {SLOTS // WORKERS} slots"
    )
    local, dask = (report(name, results[name], args.episodes) for name in OPENERS)
    print(f"dask / local episodes/s: {dask.rate / local.rate:.3f}")
    print(
        f"dask adds per episode: {(dask.slot_s - local.slot_s) * 1000:.1f} ms of slot time, "
        f"{(dask.cpu_s - local.cpu_s) * 1000:.1f} ms of CPU"
    )


if __name__ == "__main__":
    main()
