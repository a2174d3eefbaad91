"""One writer per run directory: two processes started together, a resume while the run is live, and
the lock of a process killed with SIGKILL taken over by the next one."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from coder_eval.errors import RunLocked
from coder_eval.run_lock import LOCK_FILE, Holder, RunLock
from coder_eval.sandbox.leftovers import start_time
from coder_eval.trajectory import read_trajectory
from tests.executors.builders import started_run, wait_for
from tests.helpers import coder_eval, minimal_task

LOGGED_AGENT = """
sandbox: {{driver: tempdir}}
agent: {{kind: command, command: "echo {task} >> {log}; sleep {seconds}; echo ok > ok.txt"}}
"""
"""Each start of the agent is logged outside the sandbox, so a duplicate run shows."""


def logged_tasks(tmp_path: Path, count: int, seconds: float = 0.3) -> Path:
    log = tmp_path / "starts.log"
    for i in range(count):
        minimal_task(tmp_path / "tasks", f"t{i}", LOGGED_AGENT.format(task=f"t{i}", log=log, seconds=seconds))
    return log


def cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "coder_eval", *args]


def test_two_resumes_started_together_one_runs_the_other_is_refused(tmp_path: Path) -> None:
    log = logged_tasks(tmp_path, 4)
    run = tmp_path / "runs" / "r"
    planned = coder_eval(
        "run", "tasks", "--run-dir", str(run), "--no-report", "--max-cost-usd", "0", cwd=tmp_path
    )
    assert planned.returncode == 3 and not log.exists()  # planned, nothing run yet

    args = cli("run", "--resume", "--run-dir", str(run), "--no-report")
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "200"}
    both = [
        subprocess.Popen(
            args, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for _ in range(2)
    ]
    results = [(p.wait(timeout=300), p.communicate()[1]) for p in both]

    codes = sorted(code for code, _ in results)
    assert codes == [0, 2], results
    refused = next(err for code, err in results if code == 2)
    assert "is being written by another coder-eval process (pid " in refused
    assert f"on host {socket.gethostname()}, since " in refused
    assert sorted(log.read_text().split()) == ["t0", "t1", "t2", "t3"]  # each episode ran once
    for path in (run / "episodes").glob("*.jsonl"):
        trajectory = read_trajectory(path)
        assert trajectory.complete and [e.type for e in trajectory.events].count("episode_start") == 1
    assert json.loads((run / "run.json").read_text())["status"] == "completed"
    assert not (run / LOCK_FILE).exists()


HELD_AGENT = """
sandbox: {{driver: tempdir}}
agent:
  kind: command
  command: >-
    for i in $(seq 1200); do [ -e {release} ] && break; sleep 0.1; done; echo ok > ok.txt
"""
"""An agent that works until the test releases it (two minutes at the most)."""


def test_a_resume_while_the_run_is_live_is_refused_naming_it(tmp_path: Path) -> None:
    release = tmp_path / "release"
    for i in range(2):
        minimal_task(tmp_path / "tasks", f"t{i}", HELD_AGENT.format(release=release))
    run = tmp_path / "runs" / "r"
    with started_run(tmp_path, "tasks", "--run-dir", str(run), "--no-report") as live:
        wait_for(lambda: (run / "episodes").is_dir() and any((run / "episodes").iterdir()), timeout=60)
        second = coder_eval("run", "--resume", "--run-dir", str(run), "--no-report", cwd=tmp_path)
        release.touch()  # the run stays live, however slowly the second command started
        assert second.returncode == 2, second.stderr
        assert f"(pid {live.pid} on host {socket.gethostname()}, since " in second.stderr
        assert "run tasks --run-dir" in second.stderr  # the holder's command line
        assert live.wait(timeout=120) == 0
    ended = [read_trajectory(p).end for p in sorted((run / "episodes").glob("*.jsonl"))]
    assert [e.outcome if e else None for e in ended] == ["pass", "pass"]


def test_the_lock_of_a_killed_run_is_taken_over_by_the_resume(tmp_path: Path) -> None:
    log = logged_tasks(tmp_path, 3, seconds=1)
    run = tmp_path / "runs" / "r"
    with started_run(tmp_path, "tasks", "--run-dir", str(run), "--no-report") as killed:
        wait_for(lambda: log.exists() and len(log.read_text().split()) >= 2, timeout=60)
        os.killpg(killed.pid, signal.SIGKILL)
        killed.wait()
    stale = json.loads((run / LOCK_FILE).read_text())
    assert stale["pid"] == killed.pid and stale["host"] == socket.gethostname()

    resumed = coder_eval("run", "--resume", "--run-dir", str(run), "--no-report", cwd=tmp_path)

    assert resumed.returncode == 0, resumed.stderr
    assert f"took over the run's lock from pid {killed.pid} on host" in resumed.stderr
    assert all(read_trajectory(p).complete for p in (run / "episodes").glob("*.jsonl"))
    assert len(list((run / "episodes").glob("*.jsonl"))) == 3
    assert not (run / LOCK_FILE).exists()


def test_a_held_lock_refuses_another_holder_until_released(tmp_path: Path) -> None:
    first = RunLock.acquire(tmp_path)
    holder = RunLock.holder(tmp_path)
    assert holder is not None and holder.pid == os.getpid()
    with pytest.raises(RunLocked, match=rf"pid {os.getpid()} on host "):
        RunLock.acquire(tmp_path)
    first.release()
    assert RunLock.holder(tmp_path) is None and not (tmp_path / LOCK_FILE).exists()
    with RunLock.acquire(tmp_path) as again:
        assert again.previous is None


def test_a_record_of_a_dead_holder_is_taken_over_and_named(tmp_path: Path) -> None:
    dead = subprocess.Popen(["true"])
    dead.wait()
    record = Holder(dead.pid, socket.gethostname(), "2026-12-01T10:00:00+00:00", ["coder-eval", "run"], 1)
    (tmp_path / LOCK_FILE).write_text(json.dumps(record.__dict__))

    with RunLock.acquire(tmp_path) as lock:
        assert lock.previous == record


def test_a_record_of_a_live_holder_is_refused_even_where_flock_is_not_shared(tmp_path: Path) -> None:
    """A file system that does not share ``flock`` (say NFS mounted with local locks): the record
    names a process of this host that is still running, so the lock is not taken."""
    alive = subprocess.Popen(["sleep", "30"])
    try:
        record = Holder(
            alive.pid, socket.gethostname(), "2026-12-01T10:00:00+00:00", [], start_time(alive.pid)
        )
        (tmp_path / LOCK_FILE).write_text(json.dumps(record.__dict__))
        with pytest.raises(RunLocked, match=rf"pid {alive.pid} on host"):
            RunLock.acquire(tmp_path)
    finally:
        alive.kill()
        alive.wait()
