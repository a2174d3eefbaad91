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
``tests/test_public_api.py``) start interpreters of their own, and a command runs in a fresh
interpreter wherever the imports would have gone otherwise:

- some of the environment is read when an interpreter starts or when the consoles are made
  (``STARTUP``): a command whose environment differs from the server's in one of those variables;
- plugins are found on ``sys.path`` when ``coder_eval.criteria`` is imported: a command whose working
  folder (the first entry of its ``sys.path``) holds a distribution (``*.dist-info``, ``*.egg-info``)
  replaces itself with a fresh interpreter (``exec``), streams and all;
- a command given while the server runs another (from another thread), and every command under
  ``CODER_EVAL_TEST_FORK=0``.

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
import signal
import subprocess
import sys
import tempfile
import threading
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
    would: jsonschema's optional ``iri`` check kept out first, as every command that validates keeps it."""
    from coder_eval.lazy import without_iri_format

    without_iri_format()
    import coder_eval

    for module in pkgutil.walk_packages(coder_eval.__path__, "coder_eval."):
        if not module.name.startswith(NOT_PRELOADED):
            importlib.import_module(module.name)
    for name in RENDERING:
        importlib.import_module(name)


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
    """Wait for the command ``pid`` for up to ``timeout`` s, kill it after that (as
    ``subprocess.run`` does), reap it; its pidfd keeps the signal from reaching a reused pid."""
    pidfd = os.pidfd_open(pid)
    try:
        timed_out = not select.select([pidfd], [], [], timeout)[0]
        if timed_out:
            signal.pidfd_send_signal(pidfd, signal.SIGKILL)
    finally:
        os.close(pidfd)
    _, status = os.waitpid(pid, 0)
    return {"returncode": os.waitstatus_to_exitcode(status), "timed_out": timed_out}


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


class Server:
    """The fork server of this test process, started with ``env``."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self.env = dict(env)
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.cli_fork"],
            cwd=REPO,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        self.lock = threading.Lock()
        self.command: int | None = None  # the pid of the command running
        try:
            ready = self.read()
        except OSError:
            self.process.wait()
            raise
        if ready != {"ready": True}:
            self.process.kill()
            raise OSError(f"the coder-eval fork server said {ready!r}")
        self.folder = Path(tempfile.mkdtemp(prefix="ce-fork-"))

    def read(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            raise OSError("the coder-eval fork server exited")
        return json.loads(line)  # type: ignore[no-any-return]

    def serves(self, env: Mapping[str, str]) -> bool:
        """Whether a command with ``env`` can be forked here: its start-up variables are the server's."""
        return all(env.get(name) == self.env.get(name) for name in STARTUP)

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
        """End the server and the command it runs, and remove the streams' folder."""
        if self.command is not None:  # not reaped while the server lives: the pid is still its
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.command, signal.SIGKILL)
        self.process.kill()
        self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                stream.close()
        for path in self.folder.iterdir():
            path.unlink()
        self.folder.rmdir()


_server: Server | None = None
_failed = False


def run(
    args: Sequence[str], cwd: Path, env: Mapping[str, str], timeout: float
) -> subprocess.CompletedProcess[str] | None:
    """``python -m coder_eval ARGS`` forked from this process's server, or None where it cannot be
    (the caller then starts a fresh interpreter). A call interrupted on its way (a test's own
    timeout) ends the server, so the next call starts another rather than read the answer of this one."""
    global _server, _failed
    if _failed or "0" in (os.environ.get("CODER_EVAL_TEST_FORK"), env.get("CODER_EVAL_TEST_FORK")):
        return None
    if _server is None:
        try:
            _server = Server(env)
        except OSError:
            _failed = True
            return None
        atexit.unregister(stop)  # once, however many servers this process starts
        atexit.register(stop)
    server = _server
    if not server.serves(env) or not server.lock.acquire(blocking=False):
        return None
    try:
        return server.run(args, cwd, env, timeout)
    except subprocess.TimeoutExpired:
        raise
    except BaseException:
        stop()
        raise
    finally:
        server.lock.release()


def stop() -> None:
    global _server
    if _server is not None:
        _server.stop()
        _server = None


if __name__ == "__main__":
    serve()
