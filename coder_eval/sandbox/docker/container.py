"""How a docker sandbox's container is made: its isolation, limits, network and read-only binds.

Example::

    args = create_args(name, image, provision, token=token, binds=binds, init=[python, helper, "init"])
    await must(*args)          # docker create --cap-drop ALL ... --entrypoint python image helper init

The container's first process is the harness's helper reaping orphans (``helper.py``, ``init``):
commands run beside it through ``docker exec``, and stopping the container ends every one of them
(its PID namespace). It
starts with no capabilities, ``no-new-privileges``, the engine's default seccomp profile, its own
network namespace (none at all unless ``network: host``), and ``sandbox.limits`` as the engine's
memory (no swap), CPU and process limits and file-size and CPU-time rlimits.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from coder_eval.sandbox.provision import Provision
from coder_eval.sandbox.spec import Limits

LABEL = "coder_eval.sandbox"
"""Label on every container coder_eval makes (its value: the sandbox's token)."""
HOSTNAME = "coder-eval"


@dataclass(frozen=True)
class EmptyFolder:
    """A fresh, empty anonymous volume at ``target`` (whatever the image holds there is hidden);
    removed with the container."""

    target: str

    def flag(self) -> list[str]:
        return ["--mount", f"type=volume,target={_csv(self.target)},volume-nocopy=true"]


@dataclass(frozen=True)
class Bind:
    """A host path shown at ``target`` inside the container (read-only unless said otherwise)."""

    source: Path
    target: str
    read_only: bool = True

    def flag(self) -> list[str]:
        """``--mount type=bind,source=...,target=...,readonly``, quoted for the engine's CSV parser."""
        fields = ["type=bind", f"source={self.source}", f"target={self.target}"]
        if self.read_only:
            fields.append("readonly")
        return ["--mount", ",".join(_csv(field) for field in fields)]


def _csv(field: str) -> str:
    return '"' + field.replace('"', '""') + '"' if any(c in field for c in ',"') else field


def limit_flags(limits: Limits) -> list[str]:
    """``sandbox.limits`` as ``docker create`` options.

    Example: ``limit_flags(Limits(max_memory_mb=256, max_pids=64))``
    -> ``["--memory", "256m", "--memory-swap", "256m", "--pids-limit", "64"]``.
    """
    flags: list[str] = []
    if limits.max_memory_mb is not None:
        flags += ["--memory", f"{limits.max_memory_mb}m", "--memory-swap", f"{limits.max_memory_mb}m"]
    if limits.max_cpus is not None:
        flags += ["--cpus", f"{limits.max_cpus:g}"]
    if limits.max_pids is not None:
        flags += ["--pids-limit", str(limits.max_pids)]
    if limits.max_disk_mb is not None:
        size = limits.max_disk_mb * 1024 * 1024
        flags += ["--ulimit", f"fsize={size}:{size}"]
    if limits.max_cpu_seconds is not None:
        flags += ["--ulimit", f"cpu={limits.max_cpu_seconds}:{limits.max_cpu_seconds}"]
    return flags


def network_flag(network: str) -> list[str]:
    """``none`` and ``model`` (the model is reached through a bound socket): no network at all;
    ``host`` (``bridge`` in the original spelling): the engine's bridge, never the host's own."""
    return ["--network", "bridge" if network == "host" else "none"]


def create_args(
    name: str,
    image: str,
    provision: Provision,
    *,
    token: str,
    binds: Iterable[Bind | EmptyFolder],
    init: Sequence[str],
    environment: Sequence[str] = (),
) -> list[str]:
    """The ``docker create`` arguments (without ``docker``) of one sandbox's container."""
    mounts = [arg for bind in binds for arg in bind.flag()]
    env = [arg for item in environment for arg in ("-e", item)]
    return [
        "create", "--name", name, "--label", f"{LABEL}={token}", "--hostname", HOSTNAME,
        "--cap-drop", "ALL", "--security-opt", "no-new-privileges",
        *network_flag(provision.network), *limit_flags(provision.limits), *mounts, *env,
        "--workdir", "/", "--entrypoint", init[0], image, *init[1:],
    ]  # fmt: skip
