"""A run directory that fills up or turns read-only mid-run: no episode is started after, none is failed
or invalidated, ``run.json`` says ``interrupted``, one line names the file, exit 6; ``--resume`` then
finishes the run. The faults are real: a small tmpfs mounted by the test (as root), filled, or
remounted read-only."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from coder_eval.trajectory import read_trajectory
from tests.executors.builders import started_run, wait_for
from tests.helpers import coder_eval, minimal_task, write_task

SLOW = """
sandbox: {{driver: tempdir}}
agent: {{kind: command, command: "echo {task} >> {log}; sleep 0.4; echo ok > ok.txt"}}
"""


@contextlib.contextmanager
def small_disk(path: Path, size: str = "8m") -> Iterator[Path]:
    """A tmpfs of ``size`` mounted at ``path`` for the test (skipped where it cannot be mounted)."""
    if os.geteuid() != 0:
        pytest.skip("mounting a small file system for the test needs root")
    path.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)], capture_output=True, text=True
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], capture_output=True, check=False)


def fill(disk: Path) -> Path:
    """Write a file until the disk is full; the file, to delete to make room again."""
    filler = disk / "filler"
    with filler.open("wb") as handle, contextlib.suppress(OSError):
        while True:
            handle.write(b"\0" * 65536)
            handle.flush()
    return filler


def complete(run: Path) -> dict[str, bytes]:
    return {
        p.stem: p.read_bytes()
        for p in sorted((run / "episodes").glob("*.jsonl"))
        if read_trajectory(p).complete
    }


def starts(log: Path) -> list[str]:
    return log.read_text().split() if log.exists() else []


def slow_tasks(tmp_path: Path, count: int) -> Path:
    log = tmp_path / "starts.log"
    for i in range(count):
        minimal_task(tmp_path / "tasks", f"t{i}", SLOW.format(task=f"t{i}", log=log))
    return log


def stop_mid_run(tmp_path: Path, run: Path, fault: object) -> tuple[int, str, dict[str, bytes], int]:
    """Start the run, let two episodes finish, apply ``fault``, wait for the run to stop."""
    log = tmp_path / "starts.log"
    with started_run(tmp_path, "tasks", "--run-dir", str(run), "--no-report") as process:
        wait_for(lambda: len(complete(run)) >= 2 if run.exists() else False, timeout=120)
        fault()  # type: ignore[operator]
        before, started = complete(run), len(starts(log))
        _, stderr = process.communicate(timeout=120)
    return process.returncode, stderr, before, started


def assert_stopped_cleanly(run: Path, log: Path, stderr: str, started: int, reason: str) -> None:
    errors = [line for line in stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and errors[0].startswith(f"error: cannot write {run}"), stderr
    assert reason in errors[0] and f"--resume --run-dir {run}" in errors[0]
    assert "Traceback" not in stderr
    assert len(starts(log)) <= started + 1  # the one in flight at most: no episode started after
    for path in (run / "episodes").glob("*.jsonl"):
        end = read_trajectory(path).end
        assert end is None or end.outcome == "pass", (path, end)  # never failed nor invalidated


def assert_resume_finishes(tmp_path: Path, run: Path, before: dict[str, bytes], count: int) -> None:
    resumed = coder_eval("run", "--resume", "--run-dir", str(run), "--no-report", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    after = complete(run)
    assert len(after) == count == len(list((run / "episodes").glob("*.jsonl")))
    assert {k: after[k] for k in before} == before  # what finished before the fault is kept as it was
    assert json.loads((run / "run.json").read_text())["status"] == "completed"


def test_a_full_disk_stops_the_run_cleanly_and_resume_finishes_it(tmp_path: Path) -> None:
    log = slow_tasks(tmp_path, 6)
    with small_disk(tmp_path / "disk") as disk:
        run = disk / "runs" / "r"
        filler: list[Path] = []
        code, stderr, before, started = stop_mid_run(tmp_path, run, lambda: filler.append(fill(disk)))

        assert code == 6, stderr
        assert_stopped_cleanly(run, log, stderr, started, "No space left on device")
        assert json.loads((run / "run.json").read_text())["status"] == "interrupted"  # the reserve made room
        filler[0].unlink()
        assert_resume_finishes(tmp_path, run, before, 6)


def test_a_run_directory_turned_read_only_stops_the_run_and_resume_finishes_it(tmp_path: Path) -> None:
    log = slow_tasks(tmp_path, 6)
    with small_disk(tmp_path / "disk") as disk:
        run = disk / "runs" / "r"

        def read_only() -> None:  # a read-only bind mount over it (files open for writing stay so)
            subprocess.run(["mount", "--bind", str(run), str(run)], check=True)
            subprocess.run(["mount", "-o", "remount,bind,ro", str(run)], check=True)

        try:
            code, stderr, before, started = stop_mid_run(tmp_path, run, read_only)
            assert code == 6, stderr
            assert_stopped_cleanly(run, log, stderr, started, "Read-only file system")
            assert "run.json could not be set to interrupted either" in stderr
        finally:
            subprocess.run(["umount", str(run)], capture_output=True, check=False)
        assert_resume_finishes(tmp_path, run, before, 6)


def test_a_run_directory_that_cannot_be_made_exits_6_naming_it(tmp_path: Path) -> None:
    minimal_task(tmp_path / "tasks", "a", extra="agent: {kind: oracle}\n")
    with small_disk(tmp_path / "disk") as disk:
        subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)
        result = coder_eval("run", "tasks", "--run-dir", str(disk / "r"), "--no-report", cwd=tmp_path)
    assert result.returncode == 6, result.stderr
    assert result.stderr.strip() == f"error: cannot write {disk / 'r'}: Read-only file system"


LONG_VARIANT = "v" * 50
EXPERIMENT = f"experiment_id: e\nvariants:\n  - variant_id: {LONG_VARIANT}\n"


def test_episode_file_names_too_long_for_the_file_system_are_refused_at_plan_time(tmp_path: Path) -> None:
    task_id = "a" * 200
    minimal_task(tmp_path / "tasks", task_id, extra="agent: {kind: oracle}\n")
    write_task(tmp_path, EXPERIMENT, "experiment.yaml")
    for command in ("plan", "run"):
        result = coder_eval(command, "tasks", "-e", "experiment.yaml", cwd=tmp_path)
        assert result.returncode == 2, result.stderr
        assert f"task {task_id!r}: the episode id '{task_id}--{LONG_VARIANT}--r0'" in result.stderr
        assert "more than the 255 the file system" in result.stderr
    assert not (tmp_path / "runs").exists()
