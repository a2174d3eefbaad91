"""``coder_eval.pids``: a pid and its start time name one process."""

from __future__ import annotations

import os
import subprocess
import sys

from coder_eval.pids import start_time


def test_a_live_process_has_a_start_time_and_a_child_a_later_or_equal_one() -> None:
    mine = start_time(os.getpid())
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(5)"])
    try:
        theirs = start_time(child.pid)
    finally:
        child.kill()
        child.wait()
    assert mine is not None and theirs is not None and theirs >= mine


def test_a_process_that_is_gone_has_none() -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    assert start_time(child.pid) is None
