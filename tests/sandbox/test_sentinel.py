"""On tempdir, the agent's processes die with the harness: ``kill -9`` of coder-eval (its whole process
group) takes a process the agent detached with ``setsid env -i`` with it, with no later run needed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.executors.builders import wait_for
from tests.helpers import minimal_task
from tests.sandbox.builders import alive

DETACHING_AGENT = """
sandbox: {driver: tempdir}
agent: {kind: command, command: "setsid env -i /bin/sleep 322.25 > /dev/null 2>&1 < /dev/null & sleep 30.125"}
"""


def test_the_agents_processes_die_with_a_killed_harness(tmp_path: Path) -> None:
    minimal_task(tmp_path / "tasks", "detach", extra=DETACHING_AGENT)
    args = [sys.executable, "-m", "coder_eval", "run", "tasks", "--run-dir", "runs/r", "--no-report"]
    harness = subprocess.Popen(
        args, cwd=tmp_path, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        wait_for(lambda: bool(alive("sleep 322.25", within=0)), timeout=60)
    finally:
        os.killpg(harness.pid, signal.SIGKILL)
        harness.wait()
    killed = time.monotonic()

    # The sentinel kills both in one sweep; each dies when the machine schedules it, so each check
    # waits for what is left of the same five seconds from the kill.
    assert alive("sleep 322.25", within=5) == [], "the detached agent process outlived the harness"
    assert alive("sleep 30.125", within=max(0.0, killed + 5 - time.monotonic())) == []
    assert time.monotonic() - killed < 5
