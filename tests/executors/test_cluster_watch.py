"""A dask scheduler that stops answering, or a cluster left with no worker, ends the run promptly as
``interrupted`` with a message (exit 130); ``--resume`` against a new cluster finishes it, each
episode once."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from tests.executors.builders import episodes, manifest, running_cluster, started_run, wait_for
from tests.helpers import coder_eval, minimal_task

SLOW = """
sandbox: {{driver: tempdir}}
agent: {{kind: command, command: "echo {task} >> {log}; sleep 2; echo ok > ok.txt"}}
"""


def slow_tasks(tmp_path: Path, count: int) -> Path:
    log = tmp_path / "starts.log"
    for i in range(count):
        minimal_task(tmp_path / "tasks", f"t{i}", SLOW.format(task=f"t{i}", log=log))
    return log


def run_until_lost(tmp_path: Path, address: str, fault: object) -> tuple[int, str, float]:
    """Run on the cluster, apply ``fault`` once the first episode started; the exit code, stderr and
    the seconds from the fault to the end of the run."""
    log = tmp_path / "starts.log"
    args = (
        "tasks",
        "-j",
        "1",
        "--run-dir",
        "runs/r",
        "--no-report",
        "--executor",
        "dask",
        "--scheduler",
        address,
    )
    with started_run(tmp_path, *args) as process:
        wait_for(lambda: log.exists() or process.poll() is not None, timeout=120)
        assert log.exists(), process.communicate()[1]
        fault()  # type: ignore[operator]
        faulted = time.monotonic()
        _, stderr = process.communicate(timeout=120)
    return process.returncode, stderr, time.monotonic() - faulted


def resume_on_a_new_cluster(tmp_path: Path, count: int) -> None:
    with running_cluster(tmp_path / "cluster-2") as second:
        resumed = coder_eval(
            "run", "--resume", "--run-dir", "runs/r", "--no-report", "--executor", "dask",
            "--scheduler", second.address, cwd=tmp_path,
        )  # fmt: skip
    assert resumed.returncode == 0, resumed.stderr
    ended = episodes(tmp_path / "runs" / "r")
    assert len(ended) == count and all(e is not None and e.outcome == "pass" for e in ended.values())
    assert manifest(tmp_path / "runs" / "r")["status"] == "completed"


def test_a_frozen_scheduler_ends_the_run_as_interrupted_and_resume_finishes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DASK_CODER_EVAL__SCHEDULER_TIMEOUT", "4s")
    slow_tasks(tmp_path, 3)
    with running_cluster(tmp_path / "cluster") as first:
        code, stderr, seconds = run_until_lost(
            tmp_path, first.address, lambda: os.killpg(first.scheduler.pid, signal.SIGSTOP)
        )
    assert code == 130, stderr
    assert (
        f"error: the dask scheduler at {first.address} has not answered for 4 s; the run is left interrupted"
        in stderr
    )
    assert "coder-eval run --resume --run-dir" in stderr and "Traceback" not in stderr
    assert seconds < 30
    assert manifest(tmp_path / "runs" / "r")["status"] == "interrupted"
    assert not [
        e for e in episodes(tmp_path / "runs" / "r").values() if e is not None and e.outcome != "pass"
    ]
    resume_on_a_new_cluster(tmp_path, 3)


def test_a_cluster_whose_every_worker_died_ends_the_run_as_interrupted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DASK_CODER_EVAL__NO_WORKERS_TIMEOUT", "4s")
    slow_tasks(tmp_path, 2)
    with running_cluster(tmp_path / "cluster") as first:
        assert first.worker is not None
        worker = first.worker
        code, stderr, seconds = run_until_lost(
            tmp_path, first.address, lambda: os.killpg(worker.pid, signal.SIGKILL)
        )
    assert code == 130, stderr
    assert f"the dask cluster at {first.address} has had no worker for 4 s" in stderr
    assert seconds < 30
    assert manifest(tmp_path / "runs" / "r")["status"] == "interrupted"
    resume_on_a_new_cluster(tmp_path, 2)
