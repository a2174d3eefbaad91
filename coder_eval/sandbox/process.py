"""One command in its own process group, killed as a whole on timeout or cancellation.

Example::

    result = await run_in_group(["/bin/bash", "-c", "make test"], cwd=root, env=env, timeout=60)
    result.timed_out  # True when the group outlived 60 s and was killed (exit_code 124)

Output is read from pipes by the event loop as it comes, and capped there: the first
:data:`MAX_OUTPUT_BYTES` of each stream are kept, the rest counted and dropped, so a command that
prints gigabytes costs the harness neither disk nor memory. The call returns as soon as the command
itself exits, with what the pipes hold by then: a background process that keeps stdout open can
never make the caller wait (what it writes later is not read; its writes fail as a broken pipe).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import IO

from coder_eval.sandbox.base import ExecResult

TIMEOUT_EXIT_CODE = 124
"""``exit_code`` of a command that timed out (as GNU ``timeout`` reports it)."""

TERM_GRACE_S = 0.5
"""Seconds between SIGTERM and SIGKILL when a command times out."""

MAX_OUTPUT_BYTES = 8 * 1024 * 1024
"""stdout and stderr are each cut to this many bytes (a note says how many were dropped)."""
READ_BYTES = 1 << 20


async def run_in_group(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: dict[str, str],
    timeout: float | None = None,
    stdin: str | None = None,
    on_start: Callable[[int], None] | None = None,
    max_output: int | None = None,
) -> ExecResult:
    """Run ``argv`` as the leader of a new session; ``on_start`` receives its pid (= its group id);
    each stream is kept up to ``max_output`` bytes (default :data:`MAX_OUTPUT_BYTES`).

    Example: ``await run_in_group(["sleep", "9"], cwd=Path("/tmp"), env={}, timeout=1)``
    -> ``ExecResult(exit_code=124, timed_out=True, ...)`` after about 1 s.
    """
    started = time.monotonic()
    cap = MAX_OUTPUT_BYTES if max_output is None else max_output
    with _Output(cap) as out, _Output(cap) as err, _stdin(stdin) as source:
        try:
            proc = subprocess.Popen(
                list(argv),
                cwd=cwd,
                env=env,
                stdin=source,
                stdout=out.sink,
                stderr=err.sink,
                start_new_session=True,
            )
        except (FileNotFoundError, PermissionError) as exc:
            code = 127 if isinstance(exc, FileNotFoundError) else 126
            return ExecResult(code, "", f"{argv[0]}: {exc.strerror}", time.monotonic() - started)
        out.listen()
        err.listen()
        if on_start is not None:
            on_start(proc.pid)
        try:
            timed_out = await _wait(proc, timeout)
        except BaseException:
            kill_group(proc.pid, signal.SIGKILL)
            await asyncio.shield(exited(proc))
            raise
        return ExecResult(
            exit_code=TIMEOUT_EXIT_CODE if timed_out else proc.returncode,
            stdout=out.text(),
            stderr=err.text(),
            duration_s=time.monotonic() - started,
            timed_out=timed_out,
        )


async def exited(proc: subprocess.Popen[bytes]) -> int:
    """Wait for ``proc`` to exit and reap it; its exit code.

    No thread waits: the process's pidfd becomes readable when it exits, and the event loop watches
    it. Where there are no pidfds (Linux before 5.3), a worker thread waits instead.
    """
    if proc.returncode is not None:
        return proc.returncode
    try:
        pidfd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):
        return await asyncio.to_thread(proc.wait)
    loop = asyncio.get_running_loop()
    done: asyncio.Future[None] = loop.create_future()

    def readable() -> None:
        if not done.done():
            done.set_result(None)

    loop.add_reader(pidfd, readable)
    try:
        await done
    finally:
        loop.remove_reader(pidfd)
        os.close(pidfd)
    return proc.wait()


def kill_group(pgid: int, sig: signal.Signals) -> None:
    """Send ``sig`` to every process in group ``pgid``; a group that is already gone is fine."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


async def _wait(proc: subprocess.Popen[bytes], timeout: float | None) -> bool:
    """Wait for ``proc``; on timeout terminate its group (SIGTERM, grace, SIGKILL) and return True."""
    try:
        await asyncio.wait_for(exited(proc), timeout)
        return False
    except TimeoutError:
        kill_group(proc.pid, signal.SIGTERM)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(exited(proc), TERM_GRACE_S)
        kill_group(proc.pid, signal.SIGKILL)
        await exited(proc)
        return True


class _Output:
    """One output stream of a command: a pipe the event loop reads as it fills, keeping the first
    ``cap`` bytes and counting the rest (a context manager: leaving it closes the pipe)."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self._source, self.sink = os.pipe()  # not inherited (PEP 446); Popen gives the child its end
        os.set_blocking(self._source, False)
        self.kept = bytearray()
        self.total = 0
        self._loop: asyncio.AbstractEventLoop | None = None

    def listen(self) -> None:
        """The command has its end: read ours on the event loop from now on."""
        os.close(self.sink)
        self.sink = -1
        self._loop = asyncio.get_running_loop()
        self._loop.add_reader(self._source, self._drain)

    def _drain(self) -> None:
        while self._source >= 0:
            try:
                chunk = os.read(self._source, READ_BYTES)
            except BlockingIOError:
                return
            except OSError:
                chunk = b""
            if not chunk:
                self._stop()
                return
            self.total += len(chunk)
            room = self.cap - len(self.kept)
            if room > 0:
                self.kept += chunk[:room]

    def text(self) -> str:
        """What the command wrote by now, cut with a note past ``cap``."""
        self._drain()
        self._stop()
        kept = self.kept.decode("utf-8", errors="replace")
        if self.total <= self.cap:
            return kept
        return f"{kept}\n[coder_eval: output cut at {self.cap} of {self.total} bytes]"

    def _stop(self) -> None:
        if self._source < 0:
            return
        if self._loop is not None:
            self._loop.remove_reader(self._source)
        os.close(self._source)
        self._source = -1

    def __enter__(self) -> _Output:
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop()
        if self.sink >= 0:
            os.close(self.sink)
            self.sink = -1


@contextlib.contextmanager
def _stdin(text: str | None) -> Iterator[IO[bytes] | int]:
    if text is None:
        yield subprocess.DEVNULL
        return
    with tempfile.TemporaryFile() as handle:
        handle.write(_encoded(text))
        handle.seek(0)
        yield handle


def _encoded(text: str) -> bytes:
    """``text`` as bytes, undecodable bytes it carries (``surrogateescape``) given back as they were."""
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a lone surrogate that stands for no byte
        return text.encode("utf-8", "backslashreplace")


def kill_tree(leaders: Iterable[int], marker: str | None = None, inside: Path | None = None) -> None:
    """Stop, then SIGKILL, ``leaders`` and every process they led to, however it detached.

    Example: ``kill_tree([pid], "CODER_EVAL_SANDBOX=3f2a...", Path("/tmp/coder_eval-x1"))``. Caught:
    the leaders' descendants, every process in a session one of them leads (a backgrounded job there is
    re-parented to init), with ``marker`` every process whose environment holds that ``NAME=value``
    entry (even one that called ``setsid`` itself), and with ``inside`` every process whose working
    directory is in that folder (one that also dropped its environment). Processes are frozen with
    SIGSTOP until no new one appears, then all get SIGKILL.
    """
    found: set[int] = set()
    for _ in range(20):
        new = _members(set(leaders), marker, found, inside) - found
        if not new:
            break
        for pid in new:
            _signal(pid, signal.SIGSTOP)
        found |= new
    for pid in found:
        _signal(pid, signal.SIGKILL)


def _members(leaders: set[int], marker: str | None, known: set[int], inside: Path | None) -> set[int]:
    """The closure of ``leaders | known | marker holders | residents`` under children and sessions."""
    table = _process_table()
    spared = {os.getpid(), 1}
    found = _marker_holders(table, marker) | _residents(table, inside)
    members = (leaders | known | found) & set(table) - spared
    while True:
        sessions = {table[pid][1] for pid in members} - {os.getsid(0), 0, 1}
        grown = {pid for pid, (ppid, sid) in table.items() if ppid in members or sid in sessions}
        grown = (grown | members) - spared
        if grown == members:
            return members
        members = grown


def _marker_holders(table: dict[int, tuple[int, int]], marker: str | None) -> set[int]:
    if marker is None:
        return set()
    needle = b"\0" + marker.encode() + b"\0"
    holders = set()
    for pid in table:
        environ = _proc_file(pid, "environ")
        if environ is not None and needle in b"\0" + environ:
            holders.add(pid)
    return holders


def _residents(table: dict[int, tuple[int, int]], folder: Path | None) -> set[int]:
    """Processes whose working directory is inside ``folder``."""
    if folder is None:
        return set()
    residents = set()
    for pid in table:
        try:
            if Path(f"/proc/{pid}/cwd").readlink().is_relative_to(folder):
                residents.add(pid)
        except OSError:
            continue
    return residents


def _process_table() -> dict[int, tuple[int, int]]:
    """pid -> (parent pid, session id), read from ``/proc`` (empty where there is none)."""
    table: dict[int, tuple[int, int]] = {}
    try:
        names = [entry.name for entry in Path("/proc").iterdir()]
    except OSError:
        return table
    for name in names:
        stat = _proc_file(name, "stat") if name.isdigit() else None
        fields = stat.rpartition(b")")[2].split() if stat is not None else []
        if len(fields) > 3:
            table[int(name)] = (int(fields[1]), int(fields[3]))
    return table


def _proc_file(pid: int | str, name: str) -> bytes | None:
    """``/proc/<pid>/<name>`` whole, or None when it cannot be read (the process is gone, or not ours).
    Read with ``os.read``: a scan of the process table reads a file or two of each process, and this
    takes about a third of the time ``Path.read_bytes`` does."""
    try:
        fd = os.open(f"/proc/{pid}/{name}", os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        chunks = []
        while chunk := os.read(fd, 65536):
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)


def _signal(pid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, sig)
