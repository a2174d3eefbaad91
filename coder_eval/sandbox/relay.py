"""The agent CLI's standard streams, relayed so that its own tools cannot write into them.

Example::

    argv = relayed(["bwrap", ..., "--", "claude", "-p"])     # [python, -I, -c, RELAY, --, bwrap, ...]

A CLI's stdout is the event stream the harness records, and a tool the CLI runs could open
``/proc/<cli>/fd/1`` and write lines of its own into it (a pipe can be opened there again by any
process that can see it). The relay starts the CLI with Unix sockets as its stdin, stdout and stderr
(``open()`` of a socket through ``/proc`` fails, ``ENXIO``), and copies them to and from its own
streams; it is not dumpable, so its own ``/proc/<pid>/fd`` is closed to processes without
``CAP_SYS_PTRACE``. Under ``bwrap`` it runs on the host, outside the sandbox's PID namespace (the
sandbox's first process, which holds the CLI's streams, holds the sockets); under ``docker`` the
container's helper does the same inside (``docker/helper.py``, mode ``relay``). Under ``tempdir`` the
agent's tools run with the harness's own credentials: the relay is used there only when they lack
``CAP_SYS_PTRACE`` (:func:`ptrace_capable`); with it (root, as a rule) they open the relay's streams
as easily as the CLI's, and the relay would cost a process start and a copy of every byte for nothing.

This narrows the channel; it does not make the record depend on it: what the CLI's stream says is
checked against the model endpoint's record (``coder_eval.endpoint.check``).
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Sequence
from pathlib import Path

CAP_SYS_PTRACE = 19
"""The capability's bit in ``/proc/<pid>/status``'s ``CapEff``."""

RELAY = r"""
import _socket, ctypes, os, signal, sys, threading

try:
    ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0
except Exception:
    pass


def copy(src, dst, done):
    try:
        while chunk := os.read(src, 65536):
            view = memoryview(chunk)
            while view:
                view = view[os.write(dst, view):]
    except OSError:
        pass
    finally:
        done()


def main(argv):
    pairs = [_socket.socketpair(_socket.AF_UNIX, _socket.SOCK_STREAM, 0) for _ in range(3)]
    moves = [(os.POSIX_SPAWN_DUP2, theirs.fileno(), n) for n, (ours, theirs) in enumerate(pairs)]
    try:  # the relay's own ends are close-on-exec; the signals Python ignores are reset, as Popen does
        pid = os.posix_spawnp(
            argv[0], argv, os.environ, file_actions=moves, setsigdef=(signal.SIGPIPE, signal.SIGXFSZ)
        )
    except OSError as exc:
        sys.stderr.write(f"{argv[0]}: {exc.strerror}\n")
        return 127 if isinstance(exc, FileNotFoundError) else 126
    for ours, theirs in pairs:
        theirs.close()
    feed = threading.Thread(
        target=copy, args=(0, pairs[0][0].fileno(), lambda: pairs[0][0].shutdown(_socket.SHUT_WR)),
        daemon=True,
    )
    outs = [
        threading.Thread(target=copy, args=(pairs[n][0].fileno(), n, lambda: None), daemon=True)
        for n in (1, 2)
    ]
    for thread in (feed, *outs):
        thread.start()
    code = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    for thread in outs:
        thread.join()
    return 128 - code if code < 0 else code


argv = sys.argv[1:]
sys.exit(main(argv[1:] if argv[:1] == ["--"] else argv))
"""
"""The relay, run as ``python -I -S -c RELAY -- argv...`` (see the module docstring): the standard
library alone, without ``site`` or ``subprocess``, so that it starts in about half the time."""


def relayed(argv: Sequence[str], python: str | None = None) -> list[str]:
    """``argv`` started under the relay, by ``python`` (the one running coder_eval by default).

    Example: ``relayed(["claude"])`` -> ``["/usr/bin/python3", "-I", "-S", "-c", RELAY, "--", "claude"]``.
    """
    return [python or sys.executable, "-I", "-S", "-c", RELAY, "--", *argv]


@functools.cache
def ptrace_capable() -> bool:
    """Whether this process holds ``CAP_SYS_PTRACE`` (effective), which opens any process's
    ``/proc/<pid>/fd``, a relay's too; False when that cannot be read (the relay is kept)."""
    try:
        status = Path("/proc/self/status").read_text(encoding="ascii")
        effective = next(line.split()[1] for line in status.splitlines() if line.startswith("CapEff:"))
        return bool(int(effective, 16) >> CAP_SYS_PTRACE & 1)
    except (OSError, ValueError, StopIteration, IndexError):
        return False
