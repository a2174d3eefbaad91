"""coder_eval against Inspect AI, per episode: the same trivial task through each tool's command line.

The task writes a file and checks it: coder_eval's ``command`` agent runs ``echo ok > ok.txt`` and a
``file_contains`` criterion grades it; Inspect AI's solver runs the same command in its ``local``
sandbox and its scorer reads the file back. Each tool runs it with 20 and with 220 samples, one at
a time (``coder-eval run -j 1``, ``inspect eval --max-samples 1``), and every sample must pass. From
the two wall times: the cost of one extra episode, ``(t220 - t20) / 200``, and the start-up,
``t20 - 20 x that``. Each measurement is repeated (``--repeats``, interleaved so that load on the
machine hits every tool alike) and the medians are printed with the ratio of Inspect AI's cost to
coder_eval's on the ``tempdir`` driver. coder_eval's ``bwrap`` and ``docker`` drivers are measured
the same way where they can run; otherwise the line says why not. Both tools make their sandboxes
and write their runs under the temporary folder, whose filesystem the output names: on ext4 without
a journal each file created costs more than elsewhere (``temp_folder.py``), and
``TMPDIR=/dev/shm`` measures both on tmpfs.

Inspect AI is installed into a throwaway virtualenv (``--inspect-venv DIR`` keeps and reuses one);
when it cannot be installed, its lines say why and coder_eval's are still measured.

    .venv/bin/python benchmarks/vs_inspect.py --repeats 3
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from harness_overhead import write_trivial_task
from temp_folder import filesystem

from coder_eval.run_dir import RunDir
from coder_eval.sandbox import DRIVERS
from coder_eval.sandbox.bwrap import bwrap_problem
from coder_eval.trajectory import read_trajectory

INSPECT_VERSION = "0.3.285"
SMALL, LARGE = 20, 220

INSPECT_TASK = """
from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import Score, Target, accuracy, scorer
from inspect_ai.solver import Generate, TaskState, solver
from inspect_ai.util import sandbox


@solver
def write_file():
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        await sandbox().exec(["bash", "-c", "echo ok > ok.txt"])
        return state
    return solve


@scorer(metrics=[accuracy()])
def file_has_ok():
    async def score(state: TaskState, target: Target) -> Score:
        text = await sandbox().read_file("ok.txt")
        return Score(value=1.0 if "ok" in text else 0.0)
    return score


@task
def trivial(samples: int = 20) -> Task:
    dataset = [Sample(id=i, input="write ok to ok.txt") for i in range(samples)]
    return Task(dataset=dataset, solver=write_file(), scorer=file_has_ok(), sandbox="local")
"""

INSPECT_CHECK = """
import sys
from inspect_ai.log import list_eval_logs, read_eval_log
[info] = list_eval_logs(sys.argv[1])
log = read_eval_log(info, header_only=True)
accuracy = log.results.scores[0].metrics["accuracy"].value if log.results else None
print(log.status, log.results.completed_samples if log.results else 0, accuracy)
"""


class Skip(Exception):
    """A setting that cannot be measured here; the message says why."""


class Timing(NamedTuple):
    """One command's wall time and the CPU time (user + system) of it and its children, seconds."""

    wall: float
    cpu: float


Runner = Callable[[int, Path], Timing]
"""Runs ``n`` samples with its output in a fresh folder; ``Skip`` when not every sample passed."""


@dataclass
class Setting:
    """One tool (and driver): how to run it, the figures of each round, or why it was not measured."""

    name: str
    run: Runner | None = None
    skipped: str | None = None
    per_episode: list[Timing] = field(default_factory=list)
    startup: list[Timing] = field(default_factory=list)

    def measure(self, folder: Path) -> None:
        """One round: 20 then 220 samples; the cost of an extra episode and the start-up."""
        assert self.run is not None
        small, large = (self.run(n, folder / f"{self.name.replace(' ', '-')}-{n}") for n in (SMALL, LARGE))
        cost = Timing(*((b - a) / (LARGE - SMALL) for a, b in zip(small, large, strict=True)))
        self.per_episode.append(cost)
        self.startup.append(Timing(*(a - SMALL * c for a, c in zip(small, cost, strict=True))))

    def median(self, figures: str, part: str) -> float:
        return float(statistics.median(getattr(t, part) for t in getattr(self, figures)))


ENV = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}
"""Both tools start as on a user's machine: with their bytecode caches (pip writes Inspect AI's at
install; coder_eval's are written by its first run), not compiling every module at each start."""


def run_checked(argv: list[str], cwd: Path) -> str:
    """Run a command; its stdout, or ``Skip`` with the tail of its output when it fails."""
    done = subprocess.run(argv, cwd=cwd, env=ENV, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise Skip(f"{Path(argv[0]).name} exited {done.returncode}: {(done.stderr or done.stdout)[-400:]}")
    return done.stdout


def timed(argv: list[str], cwd: Path) -> Timing:
    """``run_checked``, timed (the CPU time of every process it started included)."""
    before, started = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    run_checked(argv, cwd)
    wall, after = time.perf_counter() - started, resource.getrusage(resource.RUSAGE_CHILDREN)
    return Timing(wall, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)


def coder_eval_runner(driver: str, folder: Path) -> Runner:
    """``coder-eval run`` on the trivial task with ``driver``; every episode must pass."""
    agent = {"type": "command", "command": "echo ok > ok.txt"}
    task = write_trivial_task(folder, driver=driver, agent=agent)
    cli = Path(sys.executable).with_name("coder-eval")

    def run(n: int, out: Path) -> Timing:
        timing = timed(
            [str(cli), "run", task.name, "--repeats", str(n), "--run-dir", str(out), "--no-report"], folder
        )
        ends = [read_trajectory(path).end for path in RunDir(out).trajectory_paths()]
        failed = [end for end in ends if end is None or end.outcome != "pass"]
        if len(ends) != n or failed:
            why = failed[0].error if failed and failed[0] is not None else "trajectories missing"
            raise Skip(f"{len(failed)} of {n} episodes did not pass ({why})")
        return timing

    return run


def inspect_runner(venv: Path, folder: Path) -> Runner:
    """``inspect eval`` on the same task in its ``local`` sandbox; every sample must score 1."""
    folder.mkdir(parents=True)
    (folder / "trivial_task.py").write_text(INSPECT_TASK, encoding="utf-8")

    def run(n: int, out: Path) -> Timing:
        argv = [str(venv / "bin" / "inspect"), "eval", "trivial_task.py", "-T", f"samples={n}"]
        argv += ["--model", "mockllm/model", "--max-samples", "1", "--display", "none", "--log-dir", str(out)]
        timing = timed(argv, folder)
        status = run_checked([str(venv / "bin" / "python"), "-c", INSPECT_CHECK, str(out)], folder).split()
        if status != ["success", str(n), "1.0"]:
            raise Skip(f"Inspect AI's log says {' '.join(status)} (expected: success {n} 1.0)")
        return timing

    return run


def inspect_venv(where: Path | None, scratch: Path) -> Path:
    """A virtualenv with ``inspect-ai`` (``where`` is reused when it already has it)."""
    venv = where or scratch / "inspect-venv"
    if (venv / "bin" / "inspect").exists():
        return venv
    run_checked([sys.executable, "-m", "venv", str(venv)], scratch)
    run_checked(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", f"inspect-ai=={INSPECT_VERSION}"],
        scratch,
    )
    return venv


def docker_problem() -> str | None:
    """Why the docker driver cannot be measured here, or None."""
    if "docker" not in DRIVERS:
        return "this coder_eval has no docker driver"
    if shutil.which("docker") is None:
        return "no docker client on PATH"
    done = subprocess.run(["docker", "info"], capture_output=True, check=False)
    return None if done.returncode == 0 else "no docker engine is running (docker info failed)"


def settings(scratch: Path, venv_dir: Path | None) -> list[Setting]:
    """coder_eval on each driver, then Inspect AI; a setting that cannot run here carries why."""
    problems = {"tempdir": None, "bwrap": asyncio.run(bwrap_problem()), "docker": docker_problem()}
    found = []
    for driver, problem in problems.items():
        setting = Setting(f"coder_eval {driver}", skipped=problem)
        if problem is None:
            setting.run = coder_eval_runner(driver, scratch / driver)
        found.append(setting)
    inspect = Setting("Inspect AI local")
    try:
        inspect.run = inspect_runner(inspect_venv(venv_dir, scratch), scratch / "inspect")
    except Skip as exc:
        inspect.skipped = f"inspect-ai could not be installed: {exc}"
    return [*found, inspect]


def measure_all(found: list[Setting], repeats: int, scratch: Path) -> None:
    """Each setting in turn, ``repeats`` rounds after an untimed warm-up run of each (bytecode and
    page caches); a setting that fails is skipped with its reason."""
    for setting in found:
        if setting.run is not None and setting.skipped is None:
            try:
                setting.run(1, scratch / "warm-up" / setting.name.replace(" ", "-"))
            except Skip as exc:
                setting.skipped = str(exc)
    for round_ in range(repeats):
        for setting in found:
            if setting.skipped is not None:
                continue
            folder = scratch / f"round{round_}"
            try:
                setting.measure(folder)
            except Skip as exc:
                setting.skipped = str(exc)
            shutil.rmtree(folder, ignore_errors=True)


def report(found: list[Setting], repeats: int) -> None:
    """Medians per setting (wall, and CPU of every process), then Inspect AI's against ours."""
    print(f"write a file, check it: {SMALL} and {LARGE} samples one at a time, median of {repeats} rounds")
    where = Path(tempfile.gettempdir())
    print(f"temporary folder (sandboxes, runs, Inspect AI's samples): {where}, {filesystem(where)}")
    print(f"{'':<20} {'per extra episode':>18} {'(CPU)':>9} {'start-up':>9} {'(CPU)':>8}")
    for setting in found:
        if setting.skipped is not None or not setting.per_episode:
            print(f"{setting.name:<20} skipped: {setting.skipped or 'not measured'}")
            continue
        cost = [1000 * setting.median("per_episode", part) for part in Timing._fields]
        startup = [setting.median("startup", part) for part in Timing._fields]
        figures = f"{cost[0]:>15.1f} ms {cost[1]:>6.1f} ms {startup[0]:>7.2f} s {startup[1]:>6.2f} s"
        print(f"{setting.name:<20} {figures}")
    ours, theirs = found[0], found[-1]
    if ours.per_episode and theirs.per_episode:
        ratio = theirs.median("per_episode", "wall") / ours.median("per_episode", "wall")
        cpu = theirs.median("per_episode", "cpu") / ours.median("per_episode", "cpu")
        start_ratio = theirs.median("startup", "wall") / ours.median("startup", "wall")
        print(f"Inspect AI / coder_eval tempdir: {ratio:.2f}x per extra episode ({cpu:.2f}x in CPU time)")
        print(f"Inspect AI / coder_eval tempdir: {start_ratio:.2f}x start-up")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--inspect-venv", type=Path, help="Keep (and reuse) Inspect AI's virtualenv here.")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="vs_inspect-") as tmp:
        scratch = Path(tmp)
        found = settings(scratch, args.inspect_venv)
        measure_all(found, args.repeats, scratch)
    report(found, args.repeats)


if __name__ == "__main__":
    main()
