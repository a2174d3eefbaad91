"""A dask cluster of separate hosts (``hosts.py``: a filesystem each, none with a view of the suite or
the run directory): the example suite and a Claude Code task on the scripted model give the episodes,
verdicts and trajectories a local run gives; the task folders travel as bundles."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from coder_eval.trajectory import read_trajectory
from tests.executors.hosts import HostCluster
from tests.helpers import EXAMPLES, coder_eval

pytestmark = pytest.mark.slow


def shape(run: Path) -> dict[str, Any]:
    """Per episode: its verdict, its task's hash, and what happened in it (event kinds, tools used)."""
    found: dict[str, Any] = {}
    for path in sorted((run / "episodes").glob("*.jsonl")):
        events = read_trajectory(path).events
        start, end = events[0], events[-1]
        steps = [(e.type, getattr(e, "name", None)) for e in events[1:-1] if e.type != "message"]
        found[path.stem] = (end.outcome, end.status, end.score, start.task_hash, steps)  # type: ignore[union-attr]
    return found


def sees(cluster: HostCluster, path: Path) -> dict[str, bool]:
    from distributed import Client

    with Client(cluster.address, timeout=30) as client:  # type: ignore[no-untyped-call]
        return dict(client.run(os.path.exists, str(path)))


def reaches(host: str, port: int) -> bool:
    """Whether a TCP connection to ``host:port`` opens from where this runs."""
    import socket

    try:
        socket.create_connection((host, port), timeout=5).close()
    except OSError:
        return False
    return True


def test_each_worker_host_has_a_network_of_its_own(hosts: HostCluster) -> None:
    import sys

    import cloudpickle
    from distributed import Client

    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # the hosts have no tests package

    with Client(hosts.address, timeout=30) as client:  # type: ignore[no-untyped-call]
        through_loopback = client.run(reaches, "127.0.0.1", hosts.port)  # the scheduler's, here
        workers = {address: info["name"] for address, info in client.scheduler_info()["workers"].items()}
        through_link = {
            address: client.run(reaches, hosts.networks[name].here, hosts.port, workers=[address])[address]
            for address, name in workers.items()
        }
    assert len(through_loopback) == 2 and set(through_loopback.values()) == {False}
    assert set(through_link.values()) == {True}
    assert all(address.startswith("tcp://10.231.") for address in workers)


def test_the_example_suite_and_claude_code_run_on_hosts_that_have_no_view_of_the_suite(
    tmp_path: Path, hosts: HostCluster
) -> None:
    shutil.copytree(EXAMPLES, tmp_path / "examples")
    assert set(sees(hosts, tmp_path / "examples").values()) == {False}  # no shared path

    on_hosts = ["--executor", "dask", "--scheduler", hosts.address, "-j", "2"]
    for name, target in (
        ("oracle", ["examples", "--agent", "oracle"]),
        ("claude", ["examples/scripted_fix.yaml"]),
    ):
        local = coder_eval("run", *target, "--no-report", "--run-dir", f"runs/{name}-local", cwd=tmp_path)
        dask = coder_eval(
            "run", *target, *on_hosts, "--no-report", "--run-dir", f"runs/{name}-dask", cwd=tmp_path
        )
        assert dask.returncode == local.returncode == 0, dask.stderr
        assert shape(tmp_path / "runs" / f"{name}-dask") == shape(tmp_path / "runs" / f"{name}-local")

    claude = shape(tmp_path / "runs" / "claude-dask")
    assert [v[:2] for v in claude.values()] == [("pass", "completed")]
    assert ("tool_call", "Bash") in next(iter(claude.values()))[4]  # the real CLI ran real tools
    assert len(shape(tmp_path / "runs" / "oracle-dask")) == 6
    assert set(sees(hosts, tmp_path / "examples").values()) == {False}  # it travelled, nothing was mounted
