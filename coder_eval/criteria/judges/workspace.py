"""The judge's workspace: a fresh sandbox holding a copy of the graded workspace, made through the
driver table (``coder_eval.sandbox.DRIVERS``) like every other sandbox.

Example::

    async with judge_workspace(ctx.sandbox, "auto", endpoint) as workspace:
        workspace.sandbox.workdir   # a copy of the workspace being graded
        workspace.sandbox.wrap      # how the judge's CLI is started inside it
        workspace.isolation         # "bwrap", "docker" or "copy"

The copy comes from the graded sandbox's ``snapshot()``, so nothing the judge does reaches the
workspace being graded. Under bubblewrap, and in a docker container (the driver's default image),
the judge and every command it starts see the copy read-only, their own HOME and TMPDIR, and only the
model endpoint on the network. With a plain copy (``tempdir``) the judge runs as the calling user: a
command given an absolute path outside the copy could still write there.
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

from pydantic import AfterValidator

from coder_eval.errors import GraderError
from coder_eval.sandbox import DRIVERS, make_sandbox
from coder_eval.sandbox.base import DriverSandbox, Sandbox
from coder_eval.sandbox.bwrap import bwrap_problem
from coder_eval.sandbox.network import ModelProxy, ModelRoute
from coder_eval.sandbox.provision import Provision

PLAIN_COPY = "copy"
"""The isolation that is no isolation: a plain copy, on the ``tempdir`` driver."""
DRIVER_OF: dict[str, str] = {
    PLAIN_COPY if name == "tempdir" else name: name for name, (_, driver) in DRIVERS.items() if driver
}
"""Each isolation and the driver (``DRIVERS``) that makes it: every driver of the table is one, by
its name (``bwrap``: a read-only copy under bubblewrap; ``docker``: a read-only copy in a container),
but ``tempdir``, which is called ``copy`` (a plain copy)."""


def check_isolation(value: str) -> str:
    """An ``isolation`` the judge can ask for: a driver of the table (``DRIVER_OF``), or ``auto``
    (``bwrap`` where it runs, else ``copy``)."""
    if value != "auto" and value not in DRIVER_OF:
        raise ValueError(f"isolation {value!r}: choose {', '.join(['auto', *DRIVER_OF])}")
    return value


Isolation = Annotated[str, AfterValidator(check_isolation)]
"""``auto``, or an isolation of ``DRIVER_OF`` (either a GraderError where it cannot run)."""


@dataclass(frozen=True)
class Workspace:
    """The judge's sandbox and what isolates it."""

    sandbox: DriverSandbox
    isolation: str


@asynccontextmanager
async def judge_workspace(
    source: Sandbox, isolation: Isolation, base_url: str, host_paths: tuple[Path, ...] = ()
) -> AsyncIterator[Workspace]:
    """A fresh copy of ``source``'s workspace for one judge run (reaching ``base_url``; ``host_paths``
    shown read-only: the judge's CLI where it lives outside the harness's Python), removed after.

    Example: ``async with judge_workspace(ctx.sandbox, "auto", "http://127.0.0.1:8123") as ws:
    ws.isolation`` -> ``"bwrap"`` where bubblewrap runs, else ``"copy"``.
    """
    isolated = await _isolated(isolation)
    route = ModelRoute.to(base_url)
    with tempfile.TemporaryDirectory(prefix="coder_eval-judge-") as scratch:
        snapshot = Path(scratch) / "workspace.tar"
        with snapshot.open("wb") as out:
            await source.snapshot(out)
        provision = Provision(
            role="judge",
            snapshot=snapshot,
            network="model",
            model_port=route.port,
            env=route.env,
            host_paths=host_paths,
            read_only_workspace=True,
        )
        spec_class, _ = DRIVERS[DRIVER_OF[isolated]]
        try:
            sandbox = await make_sandbox(spec_class(), provision)
        except Exception as exc:
            raise GraderError(f"cannot make the judge's copy of the workspace: {exc}") from exc
        proxy = ModelProxy(route.upstream)
        try:
            await proxy.start(sandbox.host_socket("model"))
            yield Workspace(sandbox, isolated)
        finally:
            await proxy.stop()
            with contextlib.suppress(Exception):
                await sandbox.close()


async def _isolated(isolation: str) -> str:
    if isolation not in ("auto", "bwrap"):
        return isolation
    problem = await bwrap_problem()
    if problem is None:
        return "bwrap"
    if isolation == "bwrap":
        raise GraderError(f"agent_judge isolation 'bwrap' is unavailable: {problem}")
    return PLAIN_COPY
