"""Sandboxes: where an episode runs and where it is graded. ``DRIVERS`` is the one table of drivers.

Example::

    sandbox = await make_sandbox(task.sandbox, Provision(sources=tuple(task.sandbox.template_sources)))
    try:
        result = await sandbox.exec("pytest -q", timeout=60)
    finally:
        await sandbox.close()

``sandbox:`` in a task is :data:`SandboxSpec`, a union of the drivers' specs discriminated on
``driver`` (``auto`` when absent): a driver name that is not in the table cannot be written.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, Protocol, Union

from pydantic import Discriminator, Tag

from coder_eval.errors import SandboxError, WorkspaceFileError
from coder_eval.sandbox.base import DriverSandbox, ExecResult, Sandbox
from coder_eval.sandbox.bwrap import BwrapSandbox, BwrapSpec, bwrap_problem
from coder_eval.sandbox.docker.driver import DockerSandbox
from coder_eval.sandbox.docker.spec import DockerSpec
from coder_eval.sandbox.fake import FakeSandbox
from coder_eval.sandbox.local import HostSandbox
from coder_eval.sandbox.provision import Mount, Provision
from coder_eval.sandbox.recording import RecordingHost, ShimCall
from coder_eval.sandbox.spec import SandboxSpecBase
from coder_eval.sandbox.tempdir import TempdirSandbox, TempdirSpec


class AutoSpec(SandboxSpecBase):
    """``driver: auto`` (the default): ``bwrap`` where it runs, else ``tempdir`` with a warning."""

    driver: Literal["auto"] = "auto"


class Driver(Protocol):
    """How a driver makes a sandbox."""

    @classmethod
    async def create(
        cls, spec: Any, provision: Provision, *, base_dir: Path | None = None
    ) -> DriverSandbox: ...


DRIVERS: dict[str, tuple[type[SandboxSpecBase], type[Driver] | None]] = {
    "auto": (AutoSpec, None),
    "tempdir": (TempdirSpec, TempdirSandbox),
    "bwrap": (BwrapSpec, BwrapSandbox),
    "docker": (DockerSpec, DockerSandbox),
}
"""``driver`` name -> (its spec class, its sandbox class); ``auto`` picks one at run time."""

TEMPDIR_WARNING = (
    "bubblewrap cannot run here, so driver 'auto' uses 'tempdir', which is not a security boundary "
    "(the agent can read and change anything the harness can): {why}"
)


def _driver_of(value: Any) -> str:
    if isinstance(value, dict):
        return str(value.get("driver", "auto"))
    return str(getattr(value, "driver", "auto"))


if TYPE_CHECKING:
    SandboxSpec = SandboxSpecBase
else:  # the table becomes a union discriminated on `driver`, so errors name the driver
    SandboxSpec = Annotated[
        Union[tuple(Annotated[spec, Tag(name)] for name, (spec, _) in DRIVERS.items())],  # noqa: UP007
        Discriminator(
            _driver_of,
            custom_error_type="unknown_driver",
            custom_error_message=f"unknown sandbox driver; valid: {', '.join(DRIVERS)}",
        ),
    ]


async def resolve_driver(name: str) -> tuple[str, str | None]:
    """The driver ``name`` stands for here, and a warning when ``auto`` had to fall back to tempdir.

    Example: ``await resolve_driver("auto")`` -> ``("bwrap", None)`` where bubblewrap runs.
    """
    if name != "auto":
        return name, None
    problem = await bwrap_problem()
    if problem is None:
        return "bwrap", None
    return "tempdir", TEMPDIR_WARNING.format(why=problem)


async def make_sandbox(
    spec: SandboxSpecBase, provision: Provision, *, base_dir: Path | None = None
) -> DriverSandbox:
    """Create and seed the sandbox ``spec.driver`` names; ``SandboxError`` when it cannot run here."""
    name, _ = await resolve_driver(spec.driver)
    entry = DRIVERS.get(name)
    if entry is None or entry[1] is None:
        raise SandboxError(f"unknown sandbox driver {name!r}; valid: {', '.join(DRIVERS)}")
    return await entry[1].create(spec, provision, base_dir=base_dir)


__all__ = [
    "DRIVERS",
    "AutoSpec",
    "BwrapSandbox",
    "BwrapSpec",
    "DockerSandbox",
    "DockerSpec",
    "DriverSandbox",
    "ExecResult",
    "FakeSandbox",
    "HostSandbox",
    "Mount",
    "Provision",
    "RecordingHost",
    "Sandbox",
    "SandboxSpec",
    "SandboxSpecBase",
    "ShimCall",
    "TempdirSandbox",
    "TempdirSpec",
    "WorkspaceFileError",
    "make_sandbox",
    "resolve_driver",
]
