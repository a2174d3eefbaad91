"""A control group per sandbox, where the machine lets us make one: limits, and a kill that misses nothing.

Example::

    group = Cgroup.make("coder_eval-3f2a", Limits(max_memory_mb=256, max_pids=64))   # None if unavailable
    argv = group.enter(["bwrap", ...])   # the command joins the group before it runs
    group.kill()                         # every process in it, however it detached
    group.remove()

A process cannot leave its group without write access to the cgroup filesystem, which no sandbox
has, so ``kill`` reaches everything a sandbox's commands started (a ``setsid env -i`` child too).
cgroup v1 (one hierarchy per controller, as on this kind of machine) and v2 (unified) are both
handled. On v1 a group joins the ``freezer`` hierarchy (it lists and stops every member) and only
the controllers its limits use (``pids``, ``memory``, ``cpu``): each hierarchy joined costs every
command a move and every sandbox a folder. Without write access (an unprivileged user on a host
without delegation) ``make`` returns ``None`` and drivers fall back to process-group and
environment-marker searches, and to rlimits.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from coder_eval.sandbox.spec import Limits

ROOT = Path("/sys/fs/cgroup")
CPU_PERIOD_US = 100_000
V1_CONTROLLERS = ("pids", "memory", "cpu", "freezer")
BASH = "/bin/bash"
"""The shell ``exec`` runs a command string with (``bash -c``)."""


@dataclass(frozen=True)
class Cgroup:
    """The group's folders: one per v1 controller, or the single v2 folder."""

    folders: tuple[Path, ...]
    unified: bool

    @classmethod
    def make(cls, name: str, limits: Limits) -> Cgroup | None:
        """A fresh group named ``name`` with ``limits`` applied, or ``None`` where none can be made."""
        if (ROOT / "cgroup.controllers").is_file():
            return cls._make_v2(name, limits)
        return cls._make_v1(name, limits)

    @classmethod
    def existing(cls, name: str) -> Cgroup | None:
        """The group ``make(name, ...)`` made, as it is left (say by a harness that was killed), or
        ``None`` when there is none: the v1 hierarchies it joined, or its v2 folder under this
        process's own group."""
        v2 = ROOT / own_v2_path() / f"coder_eval-{name}"
        if (ROOT / "cgroup.controllers").is_file():
            return cls((v2,), unified=True) if v2.is_dir() else None
        folders = tuple(ROOT / c / "coder_eval" / name for c in V1_CONTROLLERS)
        found = tuple(f for f in folders if f.is_dir())
        return cls(found, unified=False) if found else None

    @classmethod
    def _make_v1(cls, name: str, limits: Limits) -> Cgroup | None:
        folders = []
        try:
            for controller in v1_controllers(limits):
                folder = ROOT / controller / "coder_eval" / name
                folder.mkdir(parents=True)
                folders.append(folder)
        except OSError:
            for folder in folders:
                with contextlib.suppress(OSError):
                    folder.rmdir()
            return None
        group = cls(tuple(folders), unified=False)
        group._limit_v1(limits)
        return group

    @classmethod
    def _make_v2(cls, name: str, limits: Limits) -> Cgroup | None:
        parent = ROOT / own_v2_path()
        folder = parent / f"coder_eval-{name}"
        try:
            folder.mkdir()
        except OSError:
            return None
        group = cls((folder,), unified=True)
        values = {
            "pids.max": limits.max_pids,
            "memory.max": limits.max_memory_mb and limits.max_memory_mb * 1024 * 1024,
            "memory.swap.max": 0 if limits.max_memory_mb else None,
            "cpu.max": limits.max_cpus and f"{int(limits.max_cpus * CPU_PERIOD_US)} {CPU_PERIOD_US}",
        }
        for key, value in values.items():
            if value is not None:
                _write(folder / key, str(value))
        return group

    @classmethod
    def names(cls) -> list[str]:
        """The names of every group ``make`` made that still exists (for the reaper)."""
        if (ROOT / "cgroup.controllers").is_file():
            parent = ROOT / own_v2_path()
            found = {
                p.name.removeprefix("coder_eval-")
                for p in _folders(parent)
                if p.name.startswith("coder_eval-")
            }
        else:
            found = {p.name for c in V1_CONTROLLERS for p in _folders(ROOT / c / "coder_eval")}
        return sorted(found)

    def _limit_v1(self, limits: Limits) -> None:
        # only the hierarchies the limits use were joined (``v1_controllers``)
        if limits.max_pids is not None:
            (pids,) = self._v1("pids")
            _write(pids / "pids.max", str(limits.max_pids))
        if limits.max_memory_mb is not None:
            (memory,) = self._v1("memory")
            _write(memory / "memory.limit_in_bytes", str(limits.max_memory_mb * 1024 * 1024))
            _write(memory / "memory.memsw.limit_in_bytes", str(limits.max_memory_mb * 1024 * 1024))
        if limits.max_cpus is not None:
            (cpu,) = self._v1("cpu")
            _write(cpu / "cpu.cfs_period_us", str(CPU_PERIOD_US))
            _write(cpu / "cpu.cfs_quota_us", str(int(limits.max_cpus * CPU_PERIOD_US)))

    def enter(self, argv: Sequence[str], limits: Limits | None = None) -> list[str]:
        """``argv`` started by a shell that first moves itself into the group (so all it starts is in
        it) and sets the rlimits of ``limits`` no group enforces (``ulimits``).

        A bash script (``[BASH, "-c", script]``, as ``exec`` runs a string) is that shell: the steps
        go before the script on its first line (so its line numbers stay as written), and a step that
        fails ends it before any of the script runs. That is one process start less per command than
        a ``/bin/sh`` that joins and then starts bash. Any other ``argv`` is started by ``/bin/sh``.
        """
        joins = [f"echo $$ > {shlex.quote(str(f / 'cgroup.procs'))}" for f in self.folders]
        script = len(argv) == 3 and list(argv[:2]) == [BASH, "-c"]
        limited = ulimits(limits, block=1024 if script else 512) if limits is not None else []
        steps = " && ".join([*joins, *limited])
        if script:
            return [BASH, "-c", f"{{ {steps}; }} || exit; {argv[2]}"]
        return ["/bin/sh", "-c", f'{steps} && exec "$@"', "coder_eval-cgroup", *argv]

    def pids(self) -> set[int]:
        """Every process in the group, read from its first folder: a command joins the folders in
        order and runs only once it has joined them all (``enter``), and a child starts in its
        parent's, so no process is in a later folder without being in the first."""
        with contextlib.suppress(OSError, ValueError):
            return {int(p) for p in (self.folders[0] / "cgroup.procs").read_text().split()}
        return set()

    def kill(self) -> None:
        """SIGKILL every process in the group (frozen first, so none forks past the kill); the group
        is left thawed and usable. An empty group is left alone: nothing can join it but through the
        harness's own ``enter``, so it stays empty."""
        if not self.pids():
            return
        if self.unified and (self.folders[0] / "cgroup.kill").exists():
            _write(self.folders[0] / "cgroup.kill", "1")
            self._wait_empty()
            return
        freezer = next(iter(self._v1("freezer")), None)
        try:
            for _ in range(50):
                if freezer is not None:
                    _write(freezer / "freezer.state", "FROZEN")
                pids = self.pids()
                if not pids:
                    break
                for pid in pids:
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.kill(pid, signal.SIGKILL)
                if freezer is not None:
                    _write(freezer / "freezer.state", "THAWED")  # killed tasks must thaw to exit
                time.sleep(0.01)
        finally:
            if freezer is not None:
                _write(freezer / "freezer.state", "THAWED")
        self._wait_empty()

    def _wait_empty(self, timeout: float = 2.0) -> None:
        deadline = time.monotonic() + timeout
        while self.pids() and time.monotonic() < deadline:
            time.sleep(0.01)

    def oom_killed(self) -> bool:
        """True when the memory limit killed a process of the group."""
        name = "memory.events" if self.unified else "memory.oom_control"
        for folder in self.folders if self.unified else self._v1("memory"):
            with contextlib.suppress(OSError):
                lines = (folder / name).read_text().splitlines()
                return any(line.startswith("oom_kill ") and line.split()[1] != "0" for line in lines)
        return False

    def limits_hit(self) -> list[str]:
        """The limits a process of the group ran into: ``memory`` (one was killed at it),
        ``processes`` (a fork or a new thread was refused at it)."""
        hits = ["memory"] if self.oom_killed() else []
        pids = self.folders if self.unified else self._v1("pids")
        if any(refused(f / "pids.events") for f in pids):
            hits.append("processes")
        return hits

    def _v1(self, controller: str) -> list[Path]:
        """The group's folder in ``controller``'s v1 hierarchy (none when unified, or not joined)."""
        if self.unified:
            return []
        return [f for f in self.folders if f.parent.parent.name == controller]

    def remove(self) -> None:
        self.kill()
        for folder in self.folders:
            with contextlib.suppress(OSError):
                folder.rmdir()


def refused(events: Path) -> bool:
    """Whether a ``pids.events`` file counts a fork refused at the limit (``max 3``)."""
    with contextlib.suppress(OSError):
        for line in events.read_text().splitlines():
            name, _, count = line.partition(" ")
            if name == "max" and count.strip() not in ("", "0"):
                return True
    return False


def container_forks_refused(pid: int) -> bool:
    """Whether the control group of host process ``pid`` (a container's first process) refused a
    fork at its pids limit: its ``pids`` line of ``/proc/<pid>/cgroup`` (v1), or its v2 group."""
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines():
            _, controllers, path = line.split(":", 2)
            if controllers == "" or "pids" in controllers.split(","):
                base = ROOT if controllers == "" else ROOT / "pids"
                if refused(base / path.lstrip("/") / "pids.events"):
                    return True
    return False


def v1_controllers(limits: Limits) -> tuple[str, ...]:
    """The v1 hierarchies a group with ``limits`` joins: the freezer, and what enforces each limit set.

    Example: ``v1_controllers(Limits(max_pids=64))`` -> ``("pids", "freezer")``.
    """
    used = {"pids": limits.max_pids, "memory": limits.max_memory_mb, "cpu": limits.max_cpus}
    return tuple(c for c in V1_CONTROLLERS if c == "freezer" or used[c] is not None)


def own_v2_path() -> str:
    """This process's own v2 group (``0::/path``), under which ours are made."""
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            if line.startswith("0::"):
                return line[3:].lstrip("/")
    return ""


def _folders(parent: Path) -> list[Path]:
    try:
        return [p for p in parent.iterdir() if p.is_dir()]
    except OSError:
        return []


def _write(path: Path, value: str) -> None:
    with contextlib.suppress(OSError):
        path.write_text(value)


def ulimits(limits: Limits, block: int = 512) -> list[str]:
    """The shell's ``ulimit`` commands for what a control group does not enforce: file size (in
    ``block``-byte blocks: 512 as POSIX counts them in ``/bin/sh``, 1024 in bash) and CPU time, soft
    and hard. The shell that joins the group sets them, so a command in a group costs no ``prlimit``
    of its own (one exec less, about 1 ms)."""
    found = []
    if limits.max_disk_mb is not None:
        found.append(f"ulimit -f {limits.max_disk_mb * 1024 * 1024 // block}")
    if limits.max_cpu_seconds is not None:
        found.append(f"ulimit -t {limits.max_cpu_seconds}")
    return found


def rlimits(limits: Limits) -> list[str]:
    """``prlimit`` options for a command without a control group (one in a group gets what no group
    enforces from ``ulimits``): file size and CPU time always; memory (as address space) and
    processes only where the task set them."""
    options = []
    if limits.set_by_task("max_memory_mb") and limits.max_memory_mb is not None:
        options.append(f"--as={limits.max_memory_mb * 1024 * 1024}")
    if limits.set_by_task("max_pids") and limits.max_pids is not None:
        options.append(f"--nproc={limits.max_pids}")
    if limits.max_disk_mb is not None:
        options.append(f"--fsize={limits.max_disk_mb * 1024 * 1024}")
    if limits.max_cpu_seconds is not None:
        options.append(f"--cpu={limits.max_cpu_seconds}")
    return ["/usr/bin/prlimit", *options, "--"] if options else []
