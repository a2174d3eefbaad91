"""The judge's workspace: a fresh sandbox holding a copy of the graded workspace, read-only under bwrap.

Example::

    async with judge_workspace(ctx.sandbox, "auto", endpoint) as workspace:
        workspace.sandbox.workdir   # a copy of the workspace being graded
        workspace.sandbox.wrap      # how the judge's CLI is started inside it
        workspace.isolation         # "bwrap" or "copy"

The copy comes from the graded sandbox's ``snapshot()``, so nothing the judge does reaches the
workspace being graded. Under bubblewrap the judge and every command it starts see the copy
read-only, their own HOME and TMPDIR, and only the model endpoint on the network. With a plain copy
(``tempdir``) the judge runs as the calling user: a command given an absolute path outside the copy
could still write there.
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from coder_eval.errors import GraderError
from coder_eval.sandbox.base import Sandbox
from coder_eval.sandbox.bwrap import BwrapSandbox, BwrapSpec, bwrap_problem
from coder_eval.sandbox.local import HostSandbox
from coder_eval.sandbox.network import ModelProxy, ModelRoute
from coder_eval.sandbox.provision import Provision
from coder_eval.sandbox.tempdir import TempdirSandbox, TempdirSpec

Isolation = Literal["auto", "bwrap", "copy"]
"""``bwrap``: a read-only copy under bubblewrap (GraderError where it cannot run); ``copy``: a plain
copy; ``auto``: ``bwrap`` where it runs, else ``copy``."""


@dataclass(frozen=True)
class Workspace:
    """The judge's sandbox and what isolates it."""

    sandbox: HostSandbox
    isolation: Literal["bwrap", "copy"]


@asynccontextmanager
async def judge_workspace(source: Sandbox, isolation: Isolation, base_url: str) -> AsyncIterator[Workspace]:
    """A fresh copy of ``source``'s workspace for one judge run (reaching ``base_url``), removed after.

    Example: ``async with judge_workspace(ctx.sandbox, "auto", "http://127.0.0.1:8123") as ws:
    ws.isolation`` -> ``"bwrap"`` where bubblewrap runs, else ``"copy"``.
    """
    confined = await _confined(isolation)
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
            read_only_workspace=True,
        )
        try:
            if confined:
                sandbox: HostSandbox = await BwrapSandbox.create(BwrapSpec(), provision)
            else:
                sandbox = await TempdirSandbox.create(TempdirSpec(), provision)
        except Exception as exc:
            raise GraderError(f"cannot make the judge's copy of the workspace: {exc}") from exc
        proxy = ModelProxy(route.upstream)
        try:
            await proxy.start(sandbox.host_socket("model"))
            yield Workspace(sandbox, "bwrap" if confined else "copy")
        finally:
            await proxy.stop()
            with contextlib.suppress(Exception):
                await sandbox.close()


async def _confined(isolation: Isolation) -> bool:
    if isolation == "copy":
        return False
    problem = await bwrap_problem()
    if problem is None:
        return True
    if isolation == "bwrap":
        raise GraderError(f"agent_judge isolation 'bwrap' is unavailable: {problem}")
    return False
