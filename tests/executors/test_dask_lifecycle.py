"""A dask run's lifecycle behaves as a local one: budgets, SIGTERM and Ctrl-C, --resume, gates, reports."""

from __future__ import annotations

import os
import signal
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from coder_eval.analysis import load_runs
from tests.executors.builders import episodes, manifest, processes, started_run, wait_for
from tests.experiment.builders import two_tasks, write_experiment
from tests.helpers import coder_eval, minimal_task
from tests.test_cli import AB, FakeReports, install_costly_agent

DASK = ("--executor", "dask")


def test_budget_stops_launching_new_episodes_on_dask_as_on_local(tmp_path: Path) -> None:
    install_costly_agent(tmp_path)
    for i in range(4):
        minimal_task(tmp_path / "tasks", f"t{i}")
    args = ("run", "tasks", "--agent", "costly", "--max-cost-usd", "1.5", "--no-report", *DASK)

    result = coder_eval(*args, "--junit-xml", "junit.xml", cwd=tmp_path)

    assert result.returncode == 3, result.stderr
    assert "2 episodes not started" in result.stderr
    run = (tmp_path / "runs" / "latest").resolve()
    assert manifest(run)["status"] == "budget_stopped"
    assert manifest(run)["budget"] == {
        "max_cost_usd": 1.5,
        "spent_usd": 2.0,
        "stopped": True,
        "not_started": 2,
    }
    assert len(load_runs(run).episodes) == 2
    assert ET.parse(tmp_path / "junit.xml").getroot().get("skipped") == "2"
    again = coder_eval("run", "--resume", "--max-cost-usd", "1.5", "--no-report", *DASK, cwd=tmp_path)
    assert again.returncode == 3, again.stderr  # what was spent counts: nothing more starts
    assert len(load_runs(run).episodes) == 2


QUICK = "agent: {kind: command, command: 'echo ok > ok.txt'}\n"
SLOW = "agent: {kind: command, command: 'sleep 108.5; echo ok > ok.txt'}\n"


def returned(run: Path, episode_id: str) -> bool:
    """The episode's result is in: its snapshot is written, and its trajectory after it in the same
    step (no stop can come between them)."""
    return (run / "snapshots" / f"{episode_id}.tar.gz").exists() and episodes(run).get(episode_id) is not None


def test_sigterm_stops_a_dask_run_and_resume_finishes_it_without_duplicates(tmp_path: Path) -> None:
    for name in ("q1", "q2"):
        minimal_task(tmp_path / "tasks", name, QUICK)
    for name in ("s1", "s2"):
        minimal_task(tmp_path / "tasks", name, SLOW)
    run = tmp_path / "runs" / "r"
    with started_run(tmp_path, "tasks", "-j", "4", "--run-dir", str(run), "--no-report", *DASK) as process:
        wait_for(lambda: len(processes(b"sleep\x00108.5")) == 2, timeout=120)
        # finished means the result came back and was written whole, snapshot first: a streamed
        # episode_end alone is not it (the run stopped before the result is in reads as interrupted)
        wait_for(lambda: all(returned(run, f"{name}--default--r0") for name in ("q1", "q2")), timeout=60)

        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=60)
    finished = {p.name: p.read_bytes() for p in (run / "episodes").glob("q*.jsonl")}

    assert process.returncode == 130, stderr
    assert manifest(run)["status"] == "interrupted"
    wait_for(lambda: not processes(b"sleep\x00108.5"), timeout=10)  # the agents were killed
    assert {k: e is not None for k, e in episodes(run).items()} == {  # the stopped ones read as interrupted
        "q1--default--r0": True,
        "q2--default--r0": True,
        "s1--default--r0": False,
        "s2--default--r0": False,
    }
    for name in ("s1", "s2"):
        minimal_task(tmp_path / "tasks", name, QUICK)

    again = coder_eval("run", "--resume", "--run-dir", str(run), "--no-report", *DASK, cwd=tmp_path)

    assert again.returncode == 0, again.stderr
    assert "kept 2 finished" in again.stdout
    assert {k: e.outcome if e else None for k, e in episodes(run).items()} == dict.fromkeys(
        ["q1--default--r0", "q2--default--r0", "s1--default--r0", "s2--default--r0"], "pass"
    )
    assert {p.name: p.read_bytes() for p in (run / "episodes").glob("q*.jsonl")} == finished
    assert sorted(p.name.split(".")[0] for p in (run / "partial").glob("*.jsonl")) == [
        "s1--default--r0",
        "s2--default--r0",
    ]


def test_ctrl_c_to_the_whole_process_group_stops_a_dask_run_in_order(tmp_path: Path) -> None:
    minimal_task(tmp_path / "tasks", "slow", SLOW)
    run = tmp_path / "runs" / "r"
    with started_run(tmp_path, "tasks", "-j", "2", "--run-dir", str(run), "--no-report", *DASK) as process:
        wait_for(lambda: len(processes(b"sleep\x00108.5")) == 1, timeout=120)

        os.killpg(process.pid, signal.SIGINT)  # what a terminal's Ctrl-C does
        _, stderr = process.communicate(timeout=60)

    assert process.returncode == 130, stderr
    assert "Traceback" not in stderr
    assert manifest(run)["status"] == "interrupted"
    wait_for(lambda: not processes(b"sleep\x00108.5"), timeout=10)
    assert episodes(run) == {"slow--default--r0": None}
    wait_for(lambda: not processes(b"from multiprocessing.spawn import spawn_main"), timeout=10)


def test_gates_junit_and_reports_come_out_as_on_local(
    invoke: Any, reports: FakeReports, tmp_path: Path
) -> None:
    two_tasks(tmp_path)
    write_experiment(tmp_path, AB)
    args = ("run", "tasks", "-e", "experiment.yaml", "--min-pass-rate", "0.5")

    local = invoke(*args, "--run-dir", "runs/local", "--junit-xml", "local.xml")
    dask = invoke(*args, "--run-dir", "runs/dask", "--junit-xml", "dask.xml", *DASK, "-j", "2")

    assert local.returncode == dask.returncode == 1, dask.stderr
    assert "gates: 1 passed, 1 failed" in dask.stdout
    gates = [manifest(tmp_path / "runs" / name)["gates"] for name in ("local", "dask")]
    assert gates[0] == gates[1]
    cases = [
        sorted(
            (c.get("classname"), c.get("name"), [e.tag for e in c])
            for c in ET.parse(tmp_path / xml).iter("testcase")
        )
        for xml in ("local.xml", "dask.xml")
    ]
    assert cases[0] == cases[1] and len(cases[0]) == 4
    templates = [call[0] for call in reports.calls]
    assert len(templates) % 2 == 0 and templates[: len(templates) // 2] == templates[len(templates) // 2 :]
