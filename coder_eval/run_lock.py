"""One writer per run directory: ``run``, ``run --resume`` and ``regrade`` hold ``run.lock`` while they write.

Example::

    lock = RunLock.acquire(Path("runs/r1"))   # RunLocked (exit 2) while another process holds it
    lock.previous                             # the holder a dead process left named in the file, or None
    ...
    lock.release()
    RunLock.holder(Path("runs/r1"))           # who holds it now (None: nobody), for readers

The lock is an ``flock`` on ``run.lock``. The kernel releases it when its process ends, however it
ends (``kill -9``, a crash, a power cut), so the lock of a dead process is free by construction and the
next writer takes it over; the file names the holder (pid, host, since when, its command) so that a
refused process can say who holds it, and so that the one taking over can say whose lock it was. Two
processes started together cannot both get it: ``flock`` is atomic, and a process that locked a file
its holder removed in the meantime notices (the path names another file, or none) and tries again.
Where the file system does not share ``flock`` between hosts the lock only excludes processes of one
host; on this host a holder record naming a live process is refused even then.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import socket
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from coder_eval.errors import RunLocked, RunWriteError
from coder_eval.pids import start_time
from coder_eval.trajectory import now

LOCK_FILE = "run.lock"
ATTEMPTS = 20
"""Tries before giving up on a lock file that keeps being removed under us (its holders come and go)."""


@dataclass(frozen=True)
class Holder:
    """Who holds (or last held) a run directory's lock."""

    pid: int
    host: str
    since: str
    command: list[str] = field(default_factory=list)
    started: int | None = None
    """The holder's start time (clock ticks since boot), so a reused pid is not taken for it."""

    @classmethod
    def me(cls) -> Holder:
        pid = os.getpid()
        since = now().isoformat(timespec="seconds")
        return cls(pid, socket.gethostname(), since, list(sys.argv), start_time(pid))

    def describe(self) -> str:
        """``pid 4242 on host ci-3, since 2026-12-01T10:00:00+00:00 (coder-eval run --resume)``."""
        command = f" ({' '.join(self.command)})" if self.command else ""
        return f"pid {self.pid} on host {self.host}, since {self.since}{command}"

    def alive_here(self) -> bool:
        """The holder is a process of this host that is still running."""
        return (
            self.host == socket.gethostname()
            and self.pid != os.getpid()
            and self.started is not None
            and start_time(self.pid) == self.started
        )


class RunLock:
    """A held lock on a run directory (see the module docstring)."""

    def __init__(self, path: Path, fd: int | None, previous: Holder | None) -> None:
        self.path = path
        self._fd = fd
        self.previous = previous
        """The holder named in the file when the lock was taken: a process that is gone."""

    @classmethod
    def acquire(cls, folder: Path) -> RunLock:
        """Hold ``folder``'s lock; ``RunLocked`` naming the holder when another process has it."""
        path = folder / LOCK_FILE
        for _ in range(ATTEMPTS):
            fd = _open(path)
            try:
                if not _flock(fd, fcntl.LOCK_EX):
                    raise RunLocked(locked_message(folder, _live_holder(fd)))
                if not _names(path, fd):  # its holder released and removed it meanwhile
                    os.close(fd)
                    continue
                previous = _read(fd)
                if previous is not None and previous.alive_here():  # a file system without flock
                    raise RunLocked(locked_message(folder, previous))
                _write(path, fd, Holder.me())
            except BaseException:
                os.close(fd)
                raise
            return cls(path, fd, previous)
        raise RunLocked(f"{folder}: its lock file {path} keeps changing; another process is using it")

    @staticmethod
    def holder(folder: Path) -> Holder | None:
        """Who holds ``folder``'s lock now; None when nobody does (the run is not being written)."""
        try:
            fd = os.open(folder / LOCK_FILE, os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            return None
        try:
            if _flock(fd, fcntl.LOCK_SH):
                return None
            return _read(fd) or Holder(0, "?", "?")
        finally:
            os.close(fd)

    def release(self) -> None:
        """Remove the lock file and let the lock go (the file first, so no one waits on a dead file)."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        with contextlib.suppress(OSError):
            if _names(self.path, fd):
                self.path.unlink()
        os.close(fd)

    def __enter__(self) -> RunLock:
        return self

    def __exit__(self, *_: object) -> None:
        self.release()


def locked_message(folder: Path, holder: Holder | None) -> str:
    who = holder.describe() if holder is not None else "a process that did not say who it is"
    return (
        f"{folder} is being written by another coder-eval process ({who}); wait for it to finish "
        "or stop it, then try again"
    )


def _open(path: Path) -> int:
    try:
        return os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    except OSError as exc:
        raise RunWriteError.of(path, exc) from exc


def _flock(fd: int, kind: int) -> bool:
    """Take the lock without waiting: False when another process holds it. A file system without
    locks counts as free (the holder record is still checked)."""
    try:
        fcntl.flock(fd, kind | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    except OSError as exc:
        if exc.errno in (errno.EWOULDBLOCK, errno.EACCES, errno.EAGAIN):
            return False
    return True


def _names(path: Path, fd: int) -> bool:
    """``path`` is still the file open as ``fd``."""
    try:
        here, there = path.stat(), os.fstat(fd)
    except OSError:
        return False
    return (here.st_dev, here.st_ino) == (there.st_dev, there.st_ino)


def _read(fd: int) -> Holder | None:
    try:
        os.lseek(fd, 0, os.SEEK_SET)
        data = json.loads(os.read(fd, 65536).decode("utf-8", errors="replace"))
        return Holder(**data) if isinstance(data, dict) else None
    except (OSError, ValueError, TypeError):
        return None


NAMING_WAIT_S = 2.0
"""How long a refused process waits for the holder to write its record (it writes it right after
taking the lock, so a process refused in between would otherwise name nobody, or the dead holder
before it)."""


def _live_holder(fd: int) -> Holder | None:
    """The record of the process holding the lock, once it has written it (see ``NAMING_WAIT_S``)."""
    deadline = time.monotonic() + NAMING_WAIT_S
    while True:
        holder = _read(fd)
        current = holder is not None and (holder.host != socket.gethostname() or holder.alive_here())
        if current or time.monotonic() >= deadline:
            return holder
        time.sleep(0.02)


def _write(path: Path, fd: int, holder: Holder) -> None:
    data = json.dumps(asdict(holder)).encode()
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, data, 0)
        os.fsync(fd)
    except OSError as exc:
        raise RunWriteError.of(path, exc) from exc
