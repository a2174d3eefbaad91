"""``coder-eval run --executor dask``: the same run directory as ``local``, on a LocalCluster or a
running cluster; bad executor input refused in one line before anything is made."""

from __future__ import annotations

import logging
import os
import re
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from coder_eval.executors.dask.executor import HEARTBEAT_FAILED, heartbeat_failures_in_one_line
from tests.executors.builders import episodes, manifest, running_cluster
from tests.helpers import coder_eval, minimal_task

QUICK = "agent: {kind: command, command: 'sleep 0.2; echo ok > ok.txt'}\n"


def three_tasks(tmp_path: Path) -> None:
    for name in ("a", "b"):
        minimal_task(tmp_path / "tasks", name, QUICK)
    minimal_task(tmp_path / "tasks", "c", "agent: {kind: none}\n")


def test_a_dask_run_writes_the_run_directory_a_local_run_writes(tmp_path: Path) -> None:
    three_tasks(tmp_path)
    args = ["run", "tasks", "-j", "2", "--repeats", "2", "--no-report", "--run-dir"]
    local = coder_eval(*args, "runs/local", cwd=tmp_path)
    dask = coder_eval(*args, "runs/dask", "--executor", "dask", cwd=tmp_path)

    assert dask.returncode == local.returncode == 0, dask.stderr
    ran = episodes(tmp_path / "runs" / "dask")
    assert {k: (e.outcome, e.status) for k, e in ran.items()} == {
        k: (e.outcome, e.status) for k, e in episodes(tmp_path / "runs" / "local").items()
    }
    files = sorted(p.name for p in (tmp_path / "runs" / "dask" / "episodes").iterdir())
    assert len(ran) == 6 and files == sorted(f"{k}.jsonl" for k in ran)
    assert "pass 4  fail 2  invalid 0" in dask.stdout
    kept = [
        sorted(p.name for p in (tmp_path / "runs" / name / "snapshots").iterdir())
        for name in ("local", "dask")
    ]
    assert kept[0] == kept[1] and len(kept[0]) == 6  # each workspace, shipped back from its worker
    assert {k: e.snapshot.file for k, e in ran.items() if e.snapshot} == {
        k: f"snapshots/{k}.tar.gz" for k in ran
    }
    assert manifest(tmp_path / "runs" / "dask")["snapshots"]["count"] == 6
    assert manifest(tmp_path / "runs" / "dask")["status"] == "completed"
    assert re.search(r"dask dashboard: http://127\.0\.0\.1:\d+/status", dask.stderr), dask.stderr


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[str]:
    """A scheduler and one worker (2 slots) started by ``dask`` in a folder of their own."""
    with running_cluster(tmp_path / "cluster") as started:
        yield started.address


def test_a_run_on_a_running_cluster(tmp_path: Path, cluster: str) -> None:
    three_tasks(tmp_path)
    result = coder_eval(
        "run", "tasks", "-j", "2", "--run-dir", "runs/r", "--no-report",
        "--executor", "dask", "--scheduler", cluster, cwd=tmp_path,
    )  # fmt: skip

    assert result.returncode == 0, result.stderr
    assert {k: e.outcome for k, e in episodes(tmp_path / "runs" / "r").items()} == {
        "a--default--r0": "pass",
        "b--default--r0": "pass",
        "c--default--r0": "fail",
    }
    assert not list((tmp_path / "cluster").rglob("*.jsonl"))  # the worker kept nothing of the run


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


DASK = ["--executor", "dask", "--scheduler"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--scheduler", "tcp://127.0.0.1:8786"], "a scheduler is for the dask executor, not 'local'"),
        (["--executor", "dsk"], "executor 'dsk': choose local or dask (did you mean 'dask'?)"),
        ([*DASK, "nonsense"], "error: --scheduler nonsense: not a dask address"),
        ([*DASK, "tcp://no.such.host.invalid:8786"], "its host is not known here"),
        ([*DASK, f"tcp://127.0.0.1:{closed_port()}"], "no dask scheduler answered within 5 s"),
    ],
)
def test_bad_executor_input_exits_2_in_one_line_before_anything_runs(
    tmp_path: Path, args: list[str], message: str
) -> None:
    minimal_task(tmp_path / "tasks", "a", "agent: {kind: oracle}\n")
    result = coder_eval("run", "tasks", *args, cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert message in result.stderr and "Traceback" not in result.stderr
    assert len([line for line in result.stderr.splitlines() if "rror" in line]) == 1
    assert not (tmp_path / "runs").exists()


def test_without_dask_installed_the_dask_executor_is_refused_by_name(tmp_path: Path) -> None:
    missing = tmp_path / "no_dask"
    missing.mkdir()
    (missing / "distributed.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'distributed'\", name='distributed')\n"
    )
    minimal_task(tmp_path / "tasks", "a", "agent: {kind: oracle}\n")

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "coder_eval", "run", "tasks", "--no-report", *args],
            cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(missing), "COLUMNS": "200"},
            capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip

    result = run("--executor", "dask")
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip().splitlines() == [
        "error: the dask executor needs the 'dask' extra (distributed is not installed): "
        "pip install 'coder-eval-toolkit[dask]'"
    ]
    assert not (tmp_path / "runs").exists()
    assert run().returncode == 0  # the local executor needs no dask


class Kept(logging.Handler):
    def __init__(self, records: list[logging.LogRecord]) -> None:
        super().__init__()
        self.records = records

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


def test_a_failed_heartbeat_on_the_cluster_coder_eval_starts_is_logged_in_one_line() -> None:
    """Ctrl-C stops the LocalCluster's scheduler with the run: a heartbeat in flight then fails, and
    distributed logs it with a traceback. Its workers keep the line and drop the traceback; any other
    error keeps its traceback."""
    logger = logging.getLogger("distributed.worker")
    records: list[logging.LogRecord] = []
    handler = Kept(records)
    before = list(logger.filters)
    logger.addHandler(handler)
    try:
        heartbeat_failures_in_one_line()
        heartbeat_failures_in_one_line()
        assert len(logger.filters) == len(before) + 1
        for message in (HEARTBEAT_FAILED, "Unexpected exception during heartbeat. Closing worker."):
            try:
                raise OSError("Stream is closed")
            except OSError:
                logger.exception(message)
    finally:
        logger.removeHandler(handler)
        logger.filters[:] = before

    failed, other = records
    assert failed.getMessage() == HEARTBEAT_FAILED
    assert failed.exc_info is None
    assert "Traceback" not in logging.Formatter().format(failed)
    assert other.exc_info is not None
    assert "Traceback" in logging.Formatter().format(other)
