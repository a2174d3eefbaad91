"""The sentinel: when the harness dies, however it dies, the processes of its tempdir sandboxes die too.

Example::

    guard(sandbox.token, group_name(sandbox.token), sandbox.layout.base)   # when a sandbox is made
    release(sandbox.token)                                                 # when it is closed

A ``tempdir`` sandbox has no namespace that ends with the harness (``bwrap`` has ``--die-with-parent``
and a PID namespace; a container outlives it and the next run removes it). So each harness process
starts one small sentinel of its own, in a session of its own (a ``kill -9`` of the harness's process
group leaves it be), and tells it over a pipe which sandboxes are open. When the pipe closes without
a goodbye (the harness is gone: ``kill -9``, a crash, the OOM killer), the sentinel kills every
process of the sandboxes still open, through their control group when there is one (frozen first,
so none forks past it), else by the marker in their environment and by a working directory inside
the sandbox, and removes the emptied groups. The folders stay for the next run, which removes them.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import threading
from collections.abc import Mapping
from pathlib import Path

from coder_eval.sandbox.cgroups import ROOT, V1_CONTROLLERS, own_v2_path
from coder_eval.sandbox.leftovers import MARKER_VARIABLE

SCRIPT = r"""# coder_eval sentinel (sandbox/sentinel.py)
import json, os, signal, sys, time

root, v1, v2 = sys.argv[1], sys.argv[2].split(","), sys.argv[3]
open_ = {}
for line in sys.stdin:
    record = json.loads(line)
    if record.get("closed"):
        open_.pop(record["token"], None)
    else:
        open_[record["token"]] = record


def folders(name):
    if os.path.isfile(os.path.join(root, "cgroup.controllers")):
        return [os.path.join(root, v2, "coder_eval-" + name)]
    return [os.path.join(root, c, "coder_eval", name) for c in v1]


def pids(paths):
    found = set()
    for path in paths:
        try:
            with open(os.path.join(path, "cgroup.procs")) as f:
                found |= {int(p) for p in f.read().split()}
        except (OSError, ValueError):
            pass
    return found


def marked(token, base):
    needle = ("\0" + token + "\0").encode()
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != os.getpid():
            try:
                if needle in b"\0" + open("/proc/%s/environ" % entry, "rb").read() + b"\0":
                    yield int(entry)
                elif os.readlink("/proc/%s/cwd" % entry).startswith(base + "/"):
                    yield int(entry)
            except OSError:
                pass


def freeze(paths, state):
    for path in paths:
        try:
            with open(os.path.join(path, "freezer.state"), "w") as f:
                f.write(state)
        except OSError:
            pass


for record in open_.values():
    paths = [p for p in folders(record["group"]) if os.path.isdir(p)]
    for _ in range(50):
        freeze(paths, "FROZEN")
        targets = pids(paths) | set(marked(record["marker"], record["base"]))
        if not targets:
            break
        for pid in targets:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        freeze(paths, "THAWED")
        time.sleep(0.02)
    freeze(paths, "THAWED")
    time.sleep(0.1)
    for path in paths:
        try:
            os.rmdir(path)
        except OSError:
            pass
"""

_LOCK = threading.Lock()
_SENTINEL: tuple[int, subprocess.Popen[bytes]] | None = None
"""This process's sentinel (keyed by pid: a forked child starts its own)."""


def guard(token: str, group: str, base: Path) -> None:
    """Have the sentinel kill the processes of this sandbox if the harness dies before ``release``."""
    record = {"token": token, "group": group, "marker": f"{MARKER_VARIABLE}={token}", "base": str(base)}
    _tell(record)


def release(token: str) -> None:
    """The sandbox is closed: nothing of it is left to kill."""
    _tell({"token": token, "closed": True})


def _tell(record: Mapping[str, object]) -> None:
    """One line to the sentinel (started on first use); a sentinel that cannot be told is best effort."""
    with _LOCK:
        process = _sentinel()
        if process is None or process.stdin is None:
            return
        with contextlib.suppress(OSError):
            process.stdin.write(json.dumps(record).encode() + b"\n")
            process.stdin.flush()


def _sentinel() -> subprocess.Popen[bytes] | None:
    global _SENTINEL
    if _SENTINEL is not None and _SENTINEL[0] == os.getpid() and _SENTINEL[1].poll() is None:
        return _SENTINEL[1]
    argv = [sys.executable, "-I", "-S", "-c", SCRIPT, str(ROOT), ",".join(V1_CONTROLLERS), own_v2_path()]
    try:
        process = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
    except OSError:
        return None
    _SENTINEL = (os.getpid(), process)
    return process
