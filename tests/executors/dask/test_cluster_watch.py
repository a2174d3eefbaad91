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


@pytest.mark.parametrize(
    ("setting", "victim", "sig", "says"),
    [
        (
            "SCHEDULER_TIMEOUT",
            "scheduler",
            signal.SIGSTOP,
            "the dask scheduler at {} has not answered for 4 s",
        ),
        ("NO_WORKERS_TIMEOUT", "worker", signal.SIGKILL, "the dask cluster at {} has had no worker for 4 s"),
    ],
)
def test_a_lost_cluster_ends_the_run_as_interrupted_and_resume_finishes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, setting: str, victim: str, sig: int, says: str
) -> None:
    """A frozen scheduler (SIGSTOP: its connections stay open, as when its machine hangs), or the
    only worker of a running cluster killed."""
    monkeypatch.setenv(f"DASK_CODER_EVAL__{setting}", "4s")
    slow_tasks(tmp_path, 3)
    with running_cluster(tmp_path / "cluster") as first:
        process = getattr(first, victim)
        code, stderr, seconds = run_until_lost(tmp_path, first.address, lambda: os.killpg(process.pid, sig))
    assert code == 130, stderr
    assert f"error: {says.format(first.address)}; the run is left interrupted" in stderr
    assert "coder-eval run --resume --run-dir" in stderr and "Traceback" not in stderr
    assert seconds < 30
    assert manifest(tmp_path / "runs" / "r")["status"] == "interrupted"
    ended = episodes(tmp_path / "runs" / "r").values()
    assert not [e for e in ended if e is not None and e.outcome != "pass"]  # none failed nor invalid
    resume_on_a_new_cluster(tmp_path, 3)
