"""Sandboxes: where an episode runs. ``make_sandbox`` picks the driver a task's ``sandbox.driver`` names.

Example::

    sandbox = await make_sandbox(task.sandbox, extra_env={"ANTHROPIC_BASE_URL": server.url})
    try:
        result = await sandbox.exec("pytest -q", timeout=60)
    finally:
        await sandbox.close()
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from coder_eval.errors import SandboxError, unknown_name
from coder_eval.sandbox.base import ExecResult, Sandbox
from coder_eval.sandbox.bwrap import BwrapSandbox
from coder_eval.sandbox.shims import ShimCall, read_calls
from coder_eval.sandbox.tempdir import TempdirSandbox

if TYPE_CHECKING:
    from coder_eval.task import SandboxSpec

DRIVERS: dict[str, type[TempdirSandbox]] = {"tempdir": TempdirSandbox, "bwrap": BwrapSandbox}
"""Sandbox drivers by the name a task file uses in ``sandbox.driver``."""


async def make_sandbox(
    spec: SandboxSpec, *, base_dir: Path | None = None, extra_env: Mapping[str, str] | None = None
) -> Sandbox:
    """Create and seed the sandbox ``spec.driver`` names; ``SandboxError`` when it cannot run here.

    Example: ``await make_sandbox(SandboxSpec(driver="bwrap", network=False))`` -> ``BwrapSandbox``.
    """
    driver = DRIVERS.get(spec.driver)
    if driver is None:
        if spec.driver == "docker":
            raise SandboxError(
                f"sandbox driver 'docker' is not available in this build; use one of: {', '.join(DRIVERS)}"
            )
        raise SandboxError(unknown_name("sandbox driver", spec.driver, DRIVERS))
    return await driver.create(spec, base_dir=base_dir, extra_env=extra_env)


__all__ = [
    "DRIVERS",
    "BwrapSandbox",
    "ExecResult",
    "Sandbox",
    "ShimCall",
    "TempdirSandbox",
    "make_sandbox",
    "read_calls",
]
