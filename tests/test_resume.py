"""A run killed with SIGKILL part-way loses no finished episode; --resume finishes it without duplicates."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from coder_eval.trajectory import read_trajectory
from tests.helpers import coder_eval, minimal_task

SLOW_AGENT = """
agent: {kind: command, command: "sleep 0.4; echo ok > ok.txt"}
"""


def complete(run: Path) -> dict[str, bytes]:
    return {
        p.stem: p.read_bytes()
        for p in sorted((run / "episodes").glob("*.jsonl"))
        if read_trajectory(p).complete
    }


def wait_for(predicate: object, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return
        time.sleep(0.05)
    raise AssertionError("timed out waiting")


def test_sigkill_then_resume(tmp_path: Path) -> None:
    for i in range(6):
        minimal_task(tmp_path / "tasks", f"t{i}", extra=SLOW_AGENT)
    run = tmp_path / "runs" / "killed"
    args = [sys.executable, "-m", "coder_eval", "run", "tasks", "--repeats", "2", "--run-dir", str(run)]
    process = subprocess.Popen(
        args, cwd=tmp_path, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        wait_for(lambda: len(complete(run)) >= 3 if run.exists() else False, timeout=60)
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    before = complete(run)
    assert 3 <= len(before) < 12
    started = {p.stem for p in (run / "episodes").glob("*.jsonl")}

    result = coder_eval("run", "--resume", "--run-dir", str(run), cwd=tmp_path)

    assert result.returncode == 0, result.stderr
    after = complete(run)
    assert len(after) == 12 and len(list((run / "episodes").glob("*.jsonl"))) == 12
    assert {k: after[k] for k in before} == before  # finished episodes kept byte for byte
    partial = (
        {p.name.split(".")[0] for p in (run / "partial").glob("*.jsonl")}
        if (run / "partial").exists()
        else set()
    )
    assert partial == started - set(before)  # the interrupted episode was set aside, not deleted
    assert f"kept {len(before)} finished" in result.stdout


def test_resume_refuses_a_different_plan(tmp_path: Path) -> None:
    minimal_task(tmp_path / "tasks", "a", extra="agent: {kind: oracle}\n")
    run = tmp_path / "runs" / "r"
    assert coder_eval("run", "tasks", "--run-dir", str(run), "--no-report", cwd=tmp_path).returncode == 0
    minimal_task(tmp_path / "tasks", "b", extra="agent: {kind: oracle}\n")
    result = coder_eval("run", "--resume", "--run-dir", str(run), cwd=tmp_path)
    assert result.returncode == 2
    assert "the tasks differ from the run's plan" in result.stderr


def test_run_without_resume_refuses_an_existing_run_dir(tmp_path: Path) -> None:
    minimal_task(tmp_path / "tasks", "a", extra="agent: {kind: oracle}\n")
    run = tmp_path / "runs" / "r"
    assert coder_eval("run", "tasks", "--run-dir", str(run), "--no-report", cwd=tmp_path).returncode == 0
    result = coder_eval("run", "tasks", "--run-dir", str(run), "--no-report", cwd=tmp_path)
    assert result.returncode == 2 and "use --resume" in result.stderr


def test_sigterm_interrupts_cleanly(tmp_path: Path) -> None:
    """CI cancels with SIGTERM: the run stops like Ctrl-C, kills the agent and says 'interrupted'."""
    minimal_task(tmp_path / "tasks", "slow", extra='agent: {kind: command, command: "sleep 108.25"}\n')
    run = tmp_path / "runs" / "terminated"
    args = [sys.executable, "-m", "coder_eval", "run", "tasks", "--run-dir", str(run), "--no-report"]
    process = subprocess.Popen(
        args, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    wait_for(lambda: any((run / "episodes").glob("*.jsonl")) if run.exists() else False, timeout=60)
    time.sleep(0.5)
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=30)

    assert process.returncode == 130, stderr
    assert json.loads((run / "run.json").read_text())["status"] == "interrupted"
    deadline = time.monotonic() + 5
    while running(b"sleep\x00108.25"):
        assert time.monotonic() < deadline, "the agent's process survived SIGTERM"
        time.sleep(0.1)


def running(cmdline: bytes) -> bool:
    for entry in Path("/proc").glob("[0-9]*/cmdline"):
        with contextlib.suppress(OSError):
            if cmdline in entry.read_bytes():
                return True
    return False


ORPHAN_AGENT = """
sandbox: {driver: tempdir}
agent: {kind: command, command: "setsid env -i /bin/sleep 321.75 > /dev/null 2>&1 < /dev/null & sleep 30"}
"""


def test_resume_after_sigkill_reaps_the_dead_sessions_sandboxes_and_orphans(tmp_path: Path) -> None:
    from tests.sandbox.builders import alive

    minimal_task(tmp_path / "tasks", "orphan", extra=ORPHAN_AGENT)
    run = tmp_path / "runs" / "killed"
    args = [sys.executable, "-m", "coder_eval", "run", "tasks", "--run-dir", str(run), "--no-report"]
    process = subprocess.Popen(
        args, cwd=tmp_path, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        wait_for(lambda: bool(alive("sleep 321.75", within=0)), timeout=60)
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    logged = [json.loads(line) for line in (run / "sandboxes.jsonl").read_text().splitlines()]
    assert alive("sleep 321.75", within=0) and all(Path(r["base"]).exists() for r in logged)

    (tmp_path / "tasks" / "orphan.yaml").write_text(
        (tmp_path / "tasks" / "orphan.yaml").read_text().replace("& sleep 30", "& true")
    )
    result = coder_eval("run", "--resume", "--run-dir", str(run), "--no-report", cwd=tmp_path)

    assert "left by a harness that is no longer running" in result.stderr
    assert alive("sleep 321.75") == []
    assert not any(Path(r["base"]).exists() for r in logged)
