"""Faults on a cluster of separate hosts (``hosts.py``): a worker host that dies mid-episode and never
comes back, a submitter interrupted and resumed against the same cluster, a scheduler restarted.
Every case ends with each episode in the run directory exactly once."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from tests.executors.builders import episodes, manifest, processes, started_run, wait_for
from tests.executors.hosts import HostCluster, start_scheduler
from tests.helpers import coder_eval, minimal_task

pytestmark = pytest.mark.slow

MARK = b"sleep\x006.25"
SLOW = "sandbox: {driver: tempdir}\nagent: {kind: command, command: 'sleep 6.25; echo ok > ok.txt'}\n"


def agents_on(cluster: HostCluster) -> dict[int, str]:
    """The slow agents running on the hosts, and the host of each."""
    return {pid: host for pid in processes(MARK) if (host := cluster.host_of(pid)) is not None}


def suite(tmp_path: Path, slow: int, quick: int = 0) -> None:
    for number in range(slow):
        minimal_task(tmp_path / "tasks", f"slow{number}", SLOW)
    for number in range(quick):
        minimal_task(tmp_path / "tasks", f"quick{number}", "agent: {kind: oracle}\n")


def each_once_and_passed(run: Path, count: int) -> None:
    ended = episodes(run)
    assert len(ended) == count and sorted(p.name for p in (run / "episodes").iterdir()) == [
        f"{k}.jsonl" for k in sorted(ended)
    ]
    assert all(end is not None and end.outcome == "pass" for end in ended.values()), ended
    assert manifest(run)["status"] == "completed"


def test_a_host_that_dies_mid_episode_for_good_leaves_its_episode_to_the_other(
    tmp_path: Path, hosts: HostCluster
) -> None:
    suite(tmp_path, slow=2, quick=2)
    run = tmp_path / "runs" / "r"
    args = ("tasks", "-j", "2", "--run-dir", str(run), "--no-report", "--executor", "dask")
    with started_run(tmp_path, *args, "--scheduler", hosts.address) as process:
        wait_for(lambda: bool(agents_on(hosts)), timeout=120)
        victim = next(iter(agents_on(hosts).values()))
        hosts.kill(victim)  # it never comes back
        _, stderr = process.communicate(timeout=240)

    assert process.returncode == 0, stderr
    each_once_and_passed(run, 4)
    notes = [n for end in episodes(run).values() for n in end.notes if "dask worker running it died" in n]
    assert len(notes) == 1 and "run 2 times" in notes[0]
    assert list(hosts.hosts) == ["scheduler", "worker-1" if victim == "worker-2" else "worker-2"]


def test_an_interrupted_submitter_resumes_against_the_same_cluster(
    tmp_path: Path, hosts: HostCluster
) -> None:
    suite(tmp_path, slow=4)
    run = tmp_path / "runs" / "r"
    args = ("tasks", "-j", "2", "--run-dir", str(run), "--no-report", "--executor", "dask")
    with started_run(tmp_path, *args, "--scheduler", hosts.address) as process:
        wait_for(lambda: len(agents_on(hosts)) == 2, timeout=120)
        os.kill(process.pid, signal.SIGINT)
        _, stderr = process.communicate(timeout=120)
    assert process.returncode == 130, stderr
    assert manifest(run)["status"] == "interrupted"
    wait_for(lambda: not agents_on(hosts), timeout=30)  # the abandoned episodes were stopped on their hosts

    again = coder_eval("run", *args, "--scheduler", hosts.address, "--resume", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    each_once_and_passed(run, 4)


def test_a_restarted_scheduler_is_resumed_against(
    tmp_path: Path, hosts: HostCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    from distributed import Client

    suite(tmp_path, slow=3)
    run = tmp_path / "runs" / "r"
    args = ("tasks", "-j", "2", "--run-dir", str(run), "--no-report", "--executor", "dask")
    monkeypatch.setenv("DASK_CODER_EVAL__SCHEDULER_TIMEOUT", "3s")  # the submitter's watch gives up sooner
    with started_run(tmp_path, *args, "--scheduler", hosts.address) as process:
        wait_for(lambda: bool(agents_on(hosts)), timeout=120)
        hosts.kill("scheduler")
        _, stderr = process.communicate(timeout=120)
    assert process.returncode == 130, stderr
    assert "has not answered" in stderr or "went away" in stderr, stderr

    start_scheduler(hosts, int(hosts.address.rsplit(":", 1)[1]))
    for name in [n for n in hosts.hosts if n.startswith("worker")]:
        hosts.kill(name)  # whatever the old workers make of the lost scheduler, new hosts join
    hosts.start_worker("worker-3")
    hosts.start_worker("worker-4")
    with Client(hosts.address, timeout=60) as client:  # type: ignore[no-untyped-call]
        client.wait_for_workers(2, timeout=120)
    again = coder_eval("run", *args, "--scheduler", hosts.address, "--resume", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    each_once_and_passed(run, 3)
