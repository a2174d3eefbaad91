"""A LocalCluster worker killed mid-episode: the episode is re-run once elsewhere, or recorded invalid
(infra), and is in the run directory exactly once either way."""

from __future__ import annotations

import os
import signal
from pathlib import Path

from tests.executors.builders import descends, episodes, processes, started_run, wait_for, worker_running
from tests.helpers import minimal_task

MARK = b"sleep\x0061.25"
ATTEMPTS = """
sandbox: {{driver: tempdir}}
agent:
  kind: command
  command: >-
    echo started >> {log};
    if [ $(wc -l < {log}) -ge {finish_on} ]; then echo ok > ok.txt; else sleep 61.25; fi
"""
"""Each start is logged outside the sandbox; the ``finish_on``-th start passes, earlier ones hang."""


def starts(log: Path) -> int:
    return len(log.read_text().splitlines()) if log.exists() else 0


def kill_the_worker_of_attempt(number: int, log: Path, submitter: int) -> None:
    def agents() -> list[int]:  # not an earlier attempt's, orphaned until the new worker reaps it
        return [pid for pid in processes(MARK) if descends(pid, submitter)]

    wait_for(lambda: starts(log) == number and len(agents()) == 1, timeout=120)
    (agent,) = agents()
    os.kill(worker_running(agent, submitter), signal.SIGKILL)


def run_killing(tmp_path: Path, kills: int) -> tuple[int, str, Path]:
    log = tmp_path / "starts.log"
    minimal_task(tmp_path / "tasks", "victim", ATTEMPTS.format(log=log, finish_on=kills + 1))
    minimal_task(tmp_path / "tasks", "bystander", "agent: {kind: oracle}\n")
    run = tmp_path / "runs" / "r"
    args = ("tasks", "-j", "2", "--run-dir", str(run), "--no-report", "--executor", "dask")
    with started_run(tmp_path, *args) as process:
        for number in range(1, kills + 1):
            kill_the_worker_of_attempt(number, log, process.pid)
        _, stderr = process.communicate(timeout=180)
    assert starts(log) == min(kills + 1, 2)
    assert not processes(MARK)  # the dead worker's agent was reaped by the worker that replaced it
    return process.returncode, stderr, run


def test_an_episode_whose_worker_dies_is_run_again_once_elsewhere(tmp_path: Path) -> None:
    code, stderr, run = run_killing(tmp_path, kills=1)

    assert code == 0, stderr
    ended = episodes(run)
    assert sorted(ended) == ["bystander--default--r0", "victim--default--r0"]
    assert all(end is not None and end.outcome == "pass" for end in ended.values())
    victim, bystander = ended["victim--default--r0"], ended["bystander--default--r0"]
    assert victim is not None and any("the dask worker running it died 1 time(s)" in n for n in victim.notes)
    assert bystander is not None and not any("dask" in n for n in bystander.notes)
    assert sorted(p.name for p in (run / "episodes").iterdir()) == [f"{k}.jsonl" for k in sorted(ended)]


def test_an_episode_whose_worker_dies_twice_is_recorded_invalid_not_lost(tmp_path: Path) -> None:
    code, stderr, run = run_killing(tmp_path, kills=2)

    ended = episodes(run)
    victim = ended["victim--default--r0"]
    assert victim is not None and (victim.outcome, victim.status) == ("invalid", "infra_error"), stderr
    assert victim.error is not None and "the dask worker running this episode died" in victim.error
    assert "after 1 re-run(s)" in victim.error
    bystander = ended["bystander--default--r0"]
    assert bystander is not None and bystander.outcome == "pass"
    assert len(list((run / "episodes").iterdir())) == 2
    assert code == 0, stderr
