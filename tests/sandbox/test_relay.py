"""The agent CLI's streams relayed through sockets: its tools cannot open them again through /proc."""

from __future__ import annotations

import subprocess

from coder_eval.sandbox.relay import relayed

PROBE = r"""
import os, sys
data = sys.stdin.read()
print("got", data.strip(), flush=True)
for fd in (0, 1, 2):
    try:
        os.close(os.open(f"/proc/{os.getpid()}/fd/{fd}", os.O_WRONLY))
        print(fd, "reopened", flush=True)
    except OSError as exc:
        print(fd, exc.errno, flush=True)
sys.stderr.write("to stderr\n")
sys.exit(3)
"""


def test_bytes_flow_both_ways_and_the_exit_code_comes_back() -> None:
    done = subprocess.run(relayed(["python3", "-c", PROBE]), input=b"hello", capture_output=True, timeout=60)
    lines = done.stdout.decode().splitlines()
    assert lines[0] == "got hello"
    assert (done.returncode, done.stderr) == (3, b"to stderr\n")


def test_none_of_the_clis_streams_can_be_opened_again_through_proc() -> None:
    done = subprocess.run(relayed(["python3", "-c", PROBE]), input=b"x", capture_output=True, timeout=60)
    assert done.stdout.decode().splitlines()[1:] == ["0 6", "1 6", "2 6"]  # ENXIO: a socket


def test_a_killed_cli_exits_as_a_shell_reports_a_signal() -> None:
    done = subprocess.run(relayed(["bash", "-c", "kill -9 $$"]), capture_output=True, timeout=60)
    assert done.returncode == 128 + 9


def test_a_missing_program_is_127() -> None:
    done = subprocess.run(relayed(["/nonexistent/cli"]), capture_output=True, timeout=60)
    assert done.returncode == 127 and b"/nonexistent/cli" in done.stderr
