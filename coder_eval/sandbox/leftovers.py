"""Sandboxes a crashed or killed harness left behind: found, their processes killed, removed later.

Example::

    with recording_sandboxes(run.path / "sandboxes.jsonl"):   # every sandbox made is listed there
        ...
    reap_logged(run.path / "sandboxes.jsonl")   # --resume: the dead session's sandboxes and processes
    reap_dead(sandbox_root())                   # any run: leftovers of harnesses that are gone

Each sandbox folder holds ``owner.json`` (the harness's pid, its start time, the sandbox's token). A
sandbox whose owner is no longer running (``kill -9`` of coder-eval, a crash, a power cut) is reaped:
every process whose environment carries its token or whose working directory is inside it is killed,
its control group too, and the folder is removed (clearing ``chattr +i`` and ``+a`` flags where
it can: ``trees.py``). What
still cannot be removed is reported, never fatal.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from coder_eval.errors import RunWriteError, SandboxError
from coder_eval.pids import start_time
from coder_eval.sandbox.cgroups import Cgroup
from coder_eval.sandbox.process import kill_tree
from coder_eval.sandbox.trees import remove_tree

OWNER_FILE = "owner.json"
MARKER_VARIABLE = "CODER_EVAL_SANDBOX"
"""Set in every command's environment to the sandbox's token, so its processes can be found."""
STAGED_ETC_PREFIX = "coder_eval-etc-"
"""A harness's copy of the ``/etc`` files its ``bwrap`` sandboxes see (``bwrap.staged_etc``): reaped
with the sandboxes when its owner is gone, but not counted as one (a sandbox's own name, from
``mkdtemp``, has no second ``-``)."""

SANDBOX_LOG: ContextVar[Path | None] = ContextVar("coder_eval_sandbox_log", default=None)
"""Where the running batch lists the sandboxes it makes (``runs/<id>/sandboxes.jsonl``)."""


def owner(token: str) -> dict[str, Any]:
    """This process as the owner of a sandbox with ``token``."""
    return {"pid": os.getpid(), "started": _own_start_time(os.getpid()), "token": token}


@functools.cache
def _own_start_time(pid: int) -> int | None:
    """This process's start time, read once (keyed by pid, so a forked child reads its own)."""
    return start_time(pid)


def group_name(token: str, record: dict[str, Any] | None = None) -> str:
    """The control group of the sandbox with ``token`` owned by ``record``'s harness (default: this
    process): ``<token>.<pid>.<start time>``, so that a group whose sandbox folder is gone still says
    whose it is."""
    record = record or owner(token)
    return f"{token}.{record.get('pid', 0)}.{record.get('started') or 0}"


def register(base: Path, token: str, *, container: str | None = None) -> None:
    """Write ``owner.json`` into a new sandbox and list it in the batch's log, if there is one
    (with the name of its container, for the docker driver)."""
    record = {**owner(token), "base": str(base), **({"container": container} if container else {})}
    (base / OWNER_FILE).write_text(json.dumps(record), encoding="utf-8")
    log = SANDBOX_LOG.get()
    if log is not None:
        try:
            with log.open("a", encoding="utf-8") as handle:
                handle.write(json.dumps(record) + "\n")
        except OSError as exc:  # the run directory's own file: the run stops, the sandbox goes
            raise RunWriteError.of(log, exc) from exc


@contextlib.contextmanager
def recording_sandboxes(log: Path) -> Iterator[None]:
    """List every sandbox made inside the block in ``log`` (one JSON line each)."""
    token = SANDBOX_LOG.set(log)
    try:
        yield
    finally:
        SANDBOX_LOG.reset(token)


def is_dead(record: dict[str, Any]) -> bool:
    """The harness that made a sandbox is gone (or its pid now belongs to another process)."""
    pid = int(record.get("pid", 0))
    return pid != os.getpid() and start_time(pid) != record.get("started")


def reap(
    base: Path, token: str | None, container: str | None = None, record: dict[str, Any] | None = None
) -> str | None:
    """Kill what a sandbox left running and remove it (and its container, and its control group,
    named after ``record``, its ``owner.json``); the problem when it cannot be removed."""
    if container:
        _remove_container(container)
    marker = f"{MARKER_VARIABLE}={token}" if token else None
    kill_tree([], marker, base)
    if token:
        _remove_cgroups(token, record)
    try:
        remove_tree(base)  # clears the immutable and append-only flags it meets, too
    except SandboxError as exc:
        return str(exc)
    return None


def reap_dead(root: Path) -> tuple[int, list[str]]:
    """Reap every ``coder_eval-*`` sandbox under ``root`` whose owner is gone, then every control
    group whose owner is gone though its sandbox folder is too: (sandboxes reaped, problems). A dead
    harness's staged ``/etc`` copy is removed too, uncounted."""
    reaped, problems = 0, []
    for base in sorted(root.glob("coder_eval-*")):
        record = _owner_of(base)
        if record is None or not is_dead(record):
            continue
        problem = reap(base, record.get("token"), record.get("container"), record)
        reaped += problem is None and not base.name.startswith(STAGED_ETC_PREFIX)
        problems += [problem] if problem else []
    return reaped + reap_orphan_groups(), problems


OWNED_GROUP = re.compile(r"(?P<token>[0-9a-f]{32})\.(?P<pid>\d+)\.(?P<started>\d+)")


def reap_orphan_groups() -> int:
    """Remove the control groups of harnesses that are gone (their processes killed first), found by
    the owner their name records; a group of an unknown owner is left alone. How many were removed."""
    removed = 0
    for name in Cgroup.names():
        match = OWNED_GROUP.fullmatch(name)
        if match is None or match["started"] == "0":
            continue
        if is_dead({"pid": int(match["pid"]), "started": int(match["started"])}):
            group = Cgroup.existing(name)
            if group is not None:
                group.remove()
                removed += not any(f.exists() for f in group.folders)
    return removed


def reap_logged(log: Path) -> tuple[int, list[str]]:
    """Reap the sandboxes listed in a batch's log whose owner is gone (``--resume`` after a crash)."""
    if not log.is_file():
        return 0, []
    reaped, problems = 0, []
    try:
        lines = log.read_bytes().split(b"\n")
    except OSError:
        return 0, [f"{log}: cannot be read"]
    for line in lines:
        try:
            record = json.loads(line)  # a cut or undecodable line is a UnicodeDecodeError or ValueError
        except ValueError:
            continue
        if not isinstance(record, dict):
            continue
        base = Path(record.get("base", ""))
        if not record.get("base") or not is_dead(record) or not os.path.lexists(base):
            continue
        problem = reap(base, record.get("token"), record.get("container"), record)
        reaped += problem is None
        problems += [problem] if problem else []
    return reaped, problems


def _owner_of(base: Path) -> dict[str, Any] | None:
    try:
        record = json.loads((base / OWNER_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) else None


def _remove_container(name: str) -> None:
    """``docker rm --force`` (a container that is already gone, or no docker, is fine)."""
    docker = shutil.which("docker")
    if docker is not None:
        with contextlib.suppress(OSError, subprocess.TimeoutExpired):
            subprocess.run(
                [docker, "rm", "--force", "--volumes", name], capture_output=True, timeout=60, check=False
            )


def _remove_cgroups(token: str, record: dict[str, Any] | None) -> None:
    """The sandbox's control group (named by token alone by older coder_eval): every process in it
    killed (it may have been left frozen), then removed once empty (a group still holding a dying
    process cannot be)."""
    names = [group_name(token, record)] if record is not None else []
    for name in [*names, token]:
        group = Cgroup.existing(name)
        if group is not None:
            group.remove()
