"""The agent CLI's streams relayed through sockets: its tools cannot open them again through /proc."""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from coder_eval.sandbox.relay import ptrace_capable, relayed

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


def test_the_cli_starts_with_the_signals_python_ignores_reset() -> None:
    # Python ignores SIGPIPE (and SIGXFSZ) for itself; a CLI started with them ignored would not die of
    # a closed pipe as it does from a shell. Bits 13 and 25 of SigIgn: SIGPIPE, SIGXFSZ.
    done = subprocess.run(relayed(["grep", "SigIgn", "/proc/self/status"]), capture_output=True, timeout=60)
    ignored = int(done.stdout.decode().split()[-1], 16)
    assert done.returncode == 0 and not ignored & (1 << 12 | 1 << 24), hex(ignored)


def test_the_cli_holds_no_descriptor_of_the_relay_but_its_three_streams() -> None:
    done = subprocess.run(relayed(["ls", "/proc/self/fd"]), capture_output=True, timeout=60)
    # ls's own directory descriptor aside (the highest number), only 0, 1 and 2.
    assert sorted(int(fd) for fd in done.stdout.split())[:-1] == [0, 1, 2], done.stdout


def test_a_program_that_cannot_be_executed_is_126(tmp_path: Path) -> None:
    script = tmp_path / "cli"
    script.write_text("#!/bin/sh\necho hi\n")  # not executable
    done = subprocess.run(relayed([str(script)]), capture_output=True, timeout=60)
    assert done.returncode == 126 and str(script).encode() in done.stderr


WITHOUT_PTRACE = ["setpriv", "--inh-caps=-sys_ptrace", "--bounding-set=-sys_ptrace", "--"]
"""Run what follows without ``CAP_SYS_PTRACE`` (root keeps every other capability)."""
can_drop_ptrace = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("setpriv") is None, reason="needs root and setpriv (util-linux)"
)

INTO_THE_RELAY = r"""
import os
try:
    with open(f"/proc/{os.getppid()}/fd/1", "w") as relay_stdout:  # the relay started this process
        relay_stdout.write("forged\n")
    print("opened", flush=True)
except OSError as exc:
    print("refused", exc.errno, flush=True)
"""


def test_a_tool_with_cap_sys_ptrace_opens_the_relays_own_stream() -> None:
    """Why ``tempdir`` starts no relay for a harness that holds the capability: it would close nothing."""
    if not ptrace_capable():
        pytest.skip("this process does not hold CAP_SYS_PTRACE")
    done = subprocess.run(relayed(["python3", "-c", INTO_THE_RELAY]), capture_output=True, timeout=60)
    assert sorted(done.stdout.decode().splitlines()) == ["forged", "opened"]


@can_drop_ptrace
def test_without_cap_sys_ptrace_the_relays_stream_is_closed_to_its_tools() -> None:
    argv = [*WITHOUT_PTRACE, *relayed(["python3", "-c", INTO_THE_RELAY])]
    done = subprocess.run(argv, capture_output=True, timeout=60)
    assert done.stdout.decode().splitlines() == [f"refused {errno.EACCES}"], done.stderr


@can_drop_ptrace
@pytest.mark.parametrize("dropped", [False, True])
def test_ptrace_capable_reads_the_processs_effective_capability(dropped: bool) -> None:
    probe = "from coder_eval.sandbox.relay import ptrace_capable; print(ptrace_capable())"
    argv = [*(WITHOUT_PTRACE if dropped else []), sys.executable, "-c", probe]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.strip() == str(not dropped)
