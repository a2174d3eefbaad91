"""A dask cluster of separate hosts on this machine: a scheduler and workers, each in a bubblewrap
mount namespace of its own, with the installed software and nothing else.

Example::

    with separate_hosts(tmp_path / "hosts", workers=2) as cluster:
        coder_eval("run", "suite", "--executor", "dask", "--scheduler", cluster.address, cwd=tmp_path)
        cluster.kill("worker-1")

Each host sees the operating system (``/usr``, ``/etc``), the Python installation and the virtual
environment coder_eval runs from (and, for an editable install, its package folder), read-only, and
a private ``/tmp`` and home of its own: no task folder, no run directory, no other host's files. It
has its own hostname and IPC namespace. Each worker host has a network of its own too: a network
namespace whose one link (a veth pair, ``10.231.N.2`` there, ``10.231.N.1`` here) reaches this
machine, where the scheduler listens and the submitter runs; its loopback is its own (an episode's
scripted model listens there). Hosts share this machine's ``/proc`` (bubblewrap inside a host needs
a fully visible one to make an episode's own PID namespace) and its ``/sys`` (where an episode's
control group is made, as on any machine).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import coder_eval

SYSTEM = ("/usr", "/etc")


def software() -> list[str]:
    """What every host has, read-only: Python, the virtual environment, coder_eval's package."""
    package = Path(coder_eval.__file__).parent
    return sorted({sys.base_prefix, sys.prefix, str(package)})


def host_argv(name: str, argv: list[str]) -> list[str]:
    """``argv`` run as host ``name`` (see the module docstring)."""
    binds = [arg for path in software() for arg in ("--ro-bind", path, path)]
    system = [arg for path in SYSTEM for arg in ("--ro-bind", path, path)]
    links = [
        arg for link in ("bin", "lib", "lib64", "sbin") for arg in ("--symlink", f"usr/{link}", f"/{link}")
    ]
    return [
        "bwrap",
        "--die-with-parent",
        "--unshare-uts",
        "--unshare-ipc",
        "--hostname",
        name,
        *system,
        *links,
        "--bind",
        "/proc",
        "/proc",
        "--bind",
        "/sys",
        "/sys",
        "--dev",
        "/dev",
        "--tmpfs",
        "/tmp",
        "--tmpfs",
        "/root",
        *binds,
        "--setenv",
        "HOME",
        "/root",
        "--chdir",
        "/tmp",
        *argv,
    ]


@dataclass(frozen=True)
class Network:
    """A worker host's network namespace and its link to this machine."""

    namespace: str
    subnet: int

    @property
    def here(self) -> str:
        return f"10.231.{self.subnet}.1"

    @property
    def there(self) -> str:
        return f"10.231.{self.subnet}.2"


def ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True)


def make_network() -> Network:
    """A fresh network namespace linked to this machine by a veth pair on an unused ``10.231.N.0/30``
    (claimed under a lock: test processes make hosts at the same time)."""
    with Path("/tmp/coder_eval-netns.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        used = subprocess.run(["ip", "-o", "addr"], capture_output=True, text=True, check=True).stdout
        subnet = next(n for n in range(1, 250) if f" 10.231.{n}." not in used)
        network = Network(f"coder_eval-host-{subnet}", subnet)
        ip("netns", "add", network.namespace)
        ip("link", "add", f"ce{subnet}h", "type", "veth", "peer", "name", f"ce{subnet}n")
        ip("link", "set", f"ce{subnet}n", "netns", network.namespace)
        ip("addr", "add", f"{network.here}/30", "dev", f"ce{subnet}h")
        ip("link", "set", f"ce{subnet}h", "up")
    inside = ["-n", network.namespace]
    ip(*inside, "addr", "add", f"{network.there}/30", "dev", f"ce{subnet}n")
    ip(*inside, "link", "set", f"ce{subnet}n", "up")
    ip(*inside, "link", "set", "lo", "up")
    return network


def drop_network(network: Network) -> None:
    with contextlib.suppress(subprocess.CalledProcessError):
        ip("netns", "delete", network.namespace)  # its end of the pair goes with it, and so does ours


@dataclass
class HostCluster:
    """The scheduler's address and each host's process (by host name)."""

    address: str
    root: Path
    hosts: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    networks: dict[str, Network] = field(default_factory=dict)

    @property
    def port(self) -> int:
        return int(self.address.rsplit(":", 1)[1])

    def start(self, name: str, argv: list[str], network: Network | None = None) -> None:
        enter = ["nsenter", f"--net=/run/netns/{network.namespace}"] if network is not None else []
        with (self.root / f"{name}.log").open("ab") as log:
            self.hosts[name] = subprocess.Popen(
                [*enter, *host_argv(name, argv)], stdout=log, stderr=log, start_new_session=True
            )

    def start_worker(self, name: str, nthreads: int = 1) -> None:
        """A worker host with a network of its own, reaching the scheduler over its link."""
        if name not in self.networks:
            self.networks[name] = make_network()
        network = self.networks[name]
        scheduler = f"tcp://{network.here}:{self.port}"
        worker = ["-m", "distributed.cli.dask_worker", scheduler, "--host", network.there]
        self.start(
            name,
            [sys.executable, *worker, "--nthreads", str(nthreads), "--name", name, "--no-dashboard"],
            network,
        )

    def kill(self, name: str) -> None:
        """The host is gone at once: every process on it SIGKILLed (its episodes' sandboxes too, which
        run in sessions of their own), as when a machine dies."""
        process = self.hosts.pop(name)
        for pid in [process.pid, *descendants(process.pid)]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        process.wait(timeout=30)

    def host_of(self, pid: int) -> str | None:
        """The host a process runs on (None: none of them)."""
        return next((name for name, p in self.hosts.items() if pid in descendants(p.pid)), None)

    def stop(self) -> None:
        for name, process in list(self.hosts.items()):
            if process.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGTERM)
                try:
                    process.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    self.kill(name)
            self.hosts.pop(name, None)
        for network in self.networks.values():
            drop_network(network)
        self.networks.clear()


def descendants(pid: int) -> set[int]:
    """Every live process below ``pid``."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        with contextlib.suppress(OSError, ValueError, IndexError):
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            children.setdefault(parent, []).append(int(entry.name))
    found: set[int] = set()
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start_scheduler(cluster: HostCluster, port: int) -> None:
    scheduler = ["-m", "distributed.cli.dask_scheduler", "--host", "0.0.0.0", "--port", str(port)]
    cluster.start("scheduler", [sys.executable, *scheduler, "--dashboard-address", ":0"])


def listening_scheduler(root: Path, attempts: int = 5, wait_s: float = 60) -> HostCluster:
    """A cluster whose scheduler host listens on a free port. The port is free when chosen, and
    another process of the test run can take it before the scheduler binds it ("Address already in
    use": the scheduler exits); then another port is chosen."""
    log = root / "scheduler.log"
    for _ in range(attempts):
        port = free_port()
        cluster = HostCluster(f"tcp://127.0.0.1:{port}", root)
        seen = log.stat().st_size if log.exists() else 0
        start_scheduler(cluster, port)
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline and cluster.hosts["scheduler"].poll() is None:
            with log.open("rb") as said:
                said.seek(seen)
                if b"Scheduler at:" in said.read():
                    return cluster
            time.sleep(0.1)
        cluster.stop()
    raise RuntimeError(f"no scheduler host listened after {attempts} ports; see {log}")


@contextlib.contextmanager
def separate_hosts(root: Path, workers: int = 2, nthreads: int = 1) -> Iterator[HostCluster]:
    """A scheduler host and ``workers`` worker hosts (``worker-1``...), all stopped when the block ends."""
    from distributed import Client  # only the executor tests need dask

    root.mkdir(parents=True)
    cluster = listening_scheduler(root)
    try:
        for number in range(1, workers + 1):
            cluster.start_worker(f"worker-{number}", nthreads)
        with Client(cluster.address, timeout=60) as client:  # type: ignore[no-untyped-call]
            client.wait_for_workers(workers, timeout=120)
        yield cluster
    finally:
        cluster.stop()
