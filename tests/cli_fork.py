"""``coder-eval`` commands for the tests, each in a process forked from one that has imported coder_eval.

Each command ``tests.helpers.coder_eval`` runs is a process of its own, as when a user types it: its
own working folder, environment, standard streams (files here, read back as ``subprocess.run(...,
capture_output=True, text=True)`` reads its pipes), exit code and interpreter shutdown (``atexit``
handlers, non-daemon threads joined). What it skips is the import of coder_eval and its dependencies,
about 1 s of CPU a command on a 2-core machine, which several hundred commands a suite repeat: the
command is forked from a server (``python -m tests.cli_fork``, one per test process, started on first
use) that imported every coder_eval module but the viewer's, the dask executor's, the notebook
views' and the notebooks (Voila, dask, matplotlib and ipywidgets read the home folder or the working
folder when imported), and papermill and nbconvert, and waits for requests.

A forked command differs from a fresh interpreter in what was done before it started, so the tests of
what a command imports and when (``tests/test_lazy.py``, ``tests/cli/test_commands.py``,
``tests/test_public_api.py``) start interpreters of their own, and the imports are made as they would
have been:

- some of the environment is read when an interpreter starts or when the consoles are made
  (``STARTUP``): a command is forked from a server started with its values of those variables (one
  server for each set of values, up to ``SERVERS``; a fresh interpreter past that). The rest of a
  server's environment is this process's, whatever the command that started it was given;
- plugins are found on ``sys.path`` when ``coder_eval.criteria`` is imported: a command whose working
  folder (the first entry of its ``sys.path``) holds a distribution (``*.dist-info``, ``*.egg-info``)
  replaces itself with a fresh interpreter (``exec``), streams and all;
- a command given while its server runs another (from another thread), and every command under
  ``CODER_EVAL_TEST_FORK=0``, run in a fresh interpreter.

A server that cannot start (``failure`` says why, and a warning in the test that met it) leaves every
command to a fresh interpreter: slower, the same answers.

Protocol, one JSON object per line: the client sends ``{"args", "cwd", "env", "timeout", "stdout",
"stderr"}`` (the last two: files the command's streams are written to); the server answers
``{"pid": N}`` once the command is forked and ``{"returncode": N, "timed_out": bool}`` once it has
exited (negative: killed by that signal; after ``timeout`` s the server kills it).
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import importlib
import json
import locale
import os
import pkgutil
import runpy
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

STARTUP = (
    *("PYTHONPATH", "PYTHONHOME", "PYTHONIOENCODING", "PYTHONUTF8", "PYTHONHASHSEED", "PYTHONSAFEPATH"),
    *("PYTHONWARNINGS", "PYTHONDEVMODE", "PYTHONOPTIMIZE", "PYTHONNOUSERSITE", "PYTHONFAULTHANDLER"),
    *("LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE"),
    *("COLUMNS", "LINES", "NO_COLOR", "FORCE_COLOR", "TERM", "COLORTERM", "CLICOLOR", "CLICOLOR_FORCE"),
    *("TTY_COMPATIBLE", "TTY_INTERACTIVE", "JUPYTER_COLUMNS", "JUPYTER_LINES"),
)
"""Variables an interpreter or the consoles read at start-up: a command's must be the server's."""

NOT_PRELOADED = (
    "coder_eval.__main__",
    "coder_eval.notebooks",
    "coder_eval.cli.viewer",
    "coder_eval.executors.dask",
    "coder_eval.analysis.views",
)
"""Modules (and their submodules) the server does not import: the commands import them as they would."""

REPO = Path(__file__).resolve().parent.parent
RENDERING = ("papermill", "nbconvert", "nbclient", "jupytext", "jupyter_client.manager")
"""What a command that renders reports imports when it starts the first (``coder_eval.run.render``)."""

MAIN = str(REPO / "coder_eval" / "__main__.py")
"""``sys.argv[0]`` of ``python -m coder_eval``."""


# The server.


def preload() -> None:
    """Import every coder_eval module but ``NOT_PRELOADED``, and ``RENDERING``, the way the commands
    would: jsonschema's optional ``iri`` check kept out first, as every command that validates keeps it.
    A module that fails to import is left out (said on standard error): a command imports it as a
    fresh interpreter would, and meets what this did."""
    from coder_eval.lazy import without_iri_format

    without_iri_format()
    import coder_eval

    def left_out(name: str) -> None:
        print(f"cli_fork: {name} is not preloaded: {sys.exc_info()[1]!r}", file=sys.stderr)

    names = (m.name for m in pkgutil.walk_packages(coder_eval.__path__, "coder_eval.", onerror=left_out))
    for name in [*(n for n in names if not n.startswith(NOT_PRELOADED)), *RENDERING]:
        try:
            importlib.import_module(name)
        except Exception:
            left_out(name)


def serve() -> None:
    """Answer requests on stdin until it closes. The protocol's pipes move off fds 0 and 1 (standard
    input reads nothing, standard output goes to standard error) so a command's streams are its own."""
    requests, replies = os.dup(0), os.dup(1)
    point(0, os.devnull, os.O_RDONLY)
    os.dup2(2, 1)
    preload()
    gc.freeze()  # the objects imported stay out of the commands' collections: fewer pages copied
    write_line(replies, {"ready": True})
    pending = b""
    while True:
        while b"\n" not in pending:
            chunk = os.read(requests, 65536)
            if not chunk:
                return
            pending += chunk
        line, _, pending = pending.partition(b"\n")
        request = json.loads(line)
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            os.close(requests)
            os.close(replies)
            command(request)  # does not return: the command's SystemExit ends this process
        write_line(replies, {"pid": pid})
        write_line(replies, wait(pid, request["timeout"]))


def wait(pid: int, timeout: float) -> dict[str, Any]:
    """Wait for the command ``pid`` for up to ``timeout`` s, kill it after that (as ``subprocess.run``
    does), reap it. Until it is reaped its pid stays this process's child's, so the kill cannot reach
    another process. A pidfd wakes this on the exit; where the kernel has none, a poll does."""
    try:
        pidfd = os.pidfd_open(pid)
    except OSError:  # before Linux 5.3, or refused by a sandbox's filter
        timed_out = not exited(pid, timeout)
    else:
        try:
            timed_out = not select.select([pidfd], [], [], timeout)[0]
        finally:
            os.close(pidfd)
    if timed_out:
        os.kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    return {"returncode": os.waitstatus_to_exitcode(status), "timed_out": timed_out}


def exited(pid: int, timeout: float) -> bool:
    """Whether the child ``pid`` has exited within ``timeout`` s, polled; it is left to be reaped."""
    deadline = time.monotonic() + timeout
    while not os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.005)
    return True


def command(request: Mapping[str, Any]) -> None:
    """In the forked process: become ``python -m coder_eval ARGS`` run in ``cwd`` with ``env``."""
    point(0, os.devnull, os.O_RDONLY)
    point(1, request["stdout"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    point(2, request["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    os.chdir(request["cwd"])
    sys.path[0] = request["cwd"]  # as ``python -m`` puts its working folder first
    os.environ.clear()
    os.environ.update(request["env"])
    tempfile.tempdir = None  # TMPDIR is read again
    if any(Path.cwd().glob("*.dist-info")) or any(Path.cwd().glob("*.egg-info")):
        # a distribution on sys.path that the server did not see: its plugins are loaded at import
        os.execv(sys.executable, [sys.executable, "-m", "coder_eval", *request["args"]])
    sys.argv = [MAIN, *request["args"]]
    runpy.run_module("coder_eval", run_name="__main__", alter_sys=True)
    sys.exit(0)


def point(fd: int, path: str, flags: int) -> None:
    """Make ``fd`` the file ``path`` opened with ``flags``."""
    opened = os.open(path, flags, 0o600)
    os.dup2(opened, fd)
    os.close(opened)


def write_line(fd: int, message: Mapping[str, Any]) -> None:
    os.write(fd, json.dumps(message).encode() + b"\n")


# The client.

SERVERS = 3
"""Servers a test process starts at most: one per set of ``STARTUP`` values its commands are given."""

Startup = tuple[str | None, ...]


def startup_of(env: Mapping[str, str]) -> Startup:
    return tuple(env.get(name) for name in STARTUP)


class Server:
    """A fork server of this test process: this process's environment with ``startup``'s values of the
    ``STARTUP`` variables. ``OSError`` if it cannot start, saying why (what it wrote on standard error)."""

    def __init__(self, startup: Startup) -> None:
        env = {k: v for k, v in os.environ.items() if k not in STARTUP}
        env |= {name: value for name, value in zip(STARTUP, startup, strict=True) if value is not None}
        self.folder = Path(tempfile.mkdtemp(prefix="ce-fork-"))
        self.log = self.folder / "server.log"
        try:
            with self.log.open("wb") as log:
                self.process = subprocess.Popen(
                    [sys.executable, "-m", "tests.cli_fork"],
                    cwd=REPO,
                    env=env,
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=log,
                )
        except OSError:
            shutil.rmtree(self.folder, ignore_errors=True)
            raise
        self.lock = threading.Lock()
        self.command: int | None = None  # the pid of the command running
        try:
            ready = self.read()
            if ready != {"ready": True}:
                raise OSError(f"the coder-eval fork server said {ready!r}")
        except OSError as error:
            said = self.said
            self.stop()
            raise OSError(f"{error}; it wrote: {said}") from None

    @property
    def said(self) -> str:
        """The end of what the server wrote on standard error."""
        with contextlib.suppress(OSError):
            return self.log.read_text(errors="replace")[-2000:].strip() or "nothing"
        return "(its log is gone)"

    def read(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            raise OSError(f"the coder-eval fork server exited ({self.process.wait()})")
        return json.loads(line)  # type: ignore[no-any-return]

    def run(
        self, args: Sequence[str], cwd: Path, env: Mapping[str, str], timeout: float
    ) -> subprocess.CompletedProcess[str]:
        """The command's result as ``subprocess.run`` gives it: ``TimeoutExpired`` once the command
        ran ``timeout`` s and was killed."""
        assert self.process.stdin is not None
        out, err = self.folder / "stdout", self.folder / "stderr"
        request = {"args": [*args], "cwd": str(cwd), "env": dict(env), "timeout": timeout}
        request |= {"stdout": str(out), "stderr": str(err)}
        self.process.stdin.write(json.dumps(request).encode() + b"\n")
        self.process.stdin.flush()
        self.command = self.read()["pid"]
        done = self.read()
        self.command = None
        encoding = locale.getpreferredencoding(False)
        stdout, stderr = (path.read_text(encoding=encoding) for path in (out, err))
        argv = [sys.executable, "-m", "coder_eval", *args]
        if done["timed_out"]:
            raise subprocess.TimeoutExpired(argv, timeout, stdout, stderr)
        return subprocess.CompletedProcess(argv, done["returncode"], stdout, stderr)

    def stop(self) -> None:
        """End the server and the command it runs, and remove its folder."""
        if self.command is not None:  # not reaped while the server lives: the pid is still its
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.command, signal.SIGKILL)
        self.process.kill()
        self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                stream.close()
        shutil.rmtree(self.folder, ignore_errors=True)


_servers: dict[Startup, Server] = {}
failure: str | None = None
"""Why this process's fork server could not start, if it could not: its commands run fresh."""


def run(
    args: Sequence[str], cwd: Path, env: Mapping[str, str], timeout: float
) -> subprocess.CompletedProcess[str] | None:
    """``python -m coder_eval ARGS`` forked from a server of this process, or None where it cannot be
    (the caller then starts a fresh interpreter). A call interrupted on its way (a test's own
    timeout) ends that server, so the next call starts another rather than read the answer of this one."""
    global failure
    if failure is not None or "0" in (
        os.environ.get("CODER_EVAL_TEST_FORK"),
        env.get("CODER_EVAL_TEST_FORK"),
    ):
        return None
    key = startup_of(env)
    server = _servers.get(key)
    if server is None:
        if len(_servers) >= SERVERS:
            return None
        try:
            server = _servers[key] = Server(key)
        except OSError as error:
            failure = str(error)
            warnings.warn(f"coder-eval commands run in fresh interpreters: {failure}", stacklevel=2)
            return None
        atexit.unregister(stop)  # once, however many servers this process starts
        atexit.register(stop)
    if not server.lock.acquire(blocking=False):
        return None
    try:
        return server.run(args, cwd, env, timeout)
    except subprocess.TimeoutExpired:
        raise
    except BaseException:
        del _servers[key]
        server.stop()
        raise
    finally:
        server.lock.release()


def stop(servers: dict[Startup, Server] | None = None) -> None:
    """End this process's servers (or ``servers``)."""
    servers = _servers if servers is None else servers
    while servers:
        servers.popitem()[1].stop()


if __name__ == "__main__":
    serve()
