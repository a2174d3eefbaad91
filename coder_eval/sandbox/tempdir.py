"""``tempdir``: a fresh folder per sandbox, with its own HOME and a scrubbed environment. Not a boundary.

Example::

    sandbox = await TempdirSandbox.create(TempdirSpec(), Provision())
    result = await sandbox.exec("pytest -q", timeout=60)
    await sandbox.close()

Commands run as the calling user on the host: they can read and write anything that user can, reach
the network whatever ``network`` says, and a process that detaches itself can outlive the episode.
This is isolation for reproducibility, for trusted agents and quick checks; use ``bwrap`` (or
``driver: auto``) for agents you do not trust (docs/security.md). If the harness dies while a sandbox
is open, its sentinel kills the sandbox's processes (``sentinel.py``); the next run removes the folder.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Literal

from coder_eval.sandbox.leftovers import MARKER_VARIABLE, group_name
from coder_eval.sandbox.local import HostSandbox
from coder_eval.sandbox.process import kill_tree
from coder_eval.sandbox.relay import ptrace_capable
from coder_eval.sandbox.sentinel import guard, release
from coder_eval.sandbox.spec import SandboxSpecBase


class TempdirSpec(SandboxSpecBase):
    """``driver: tempdir``."""

    driver: Literal["tempdir"] = "tempdir"


class TempdirSandbox(HostSandbox):
    """A sandbox in a fresh temporary folder (see ``layout.py`` for what it holds)."""

    driver = "tempdir"

    def _make(self) -> None:
        super()._make()
        guard(self.token, group_name(self.token), self.layout.base)

    def wrap(
        self, argv: Sequence[str], *, cwd: str | None = None, env_names: Sequence[str] = ()
    ) -> list[str]:
        """For an agent's long-lived CLI: started as ``exec`` starts commands, its streams relayed only
        where that closes them to its tools, which run with the harness's credentials here: without
        ``CAP_SYS_PTRACE`` (see ``relay.py``)."""
        if ptrace_capable():
            return self.command(argv, cwd=cwd or self.workdir)
        return super().wrap(argv, cwd=cwd, env_names=env_names)

    async def close(self) -> None:
        try:
            await super().close()
        finally:
            release(self.token)

    async def stop(self) -> None:
        """Kill every process the sandbox's commands left behind. With a control group (as root on
        most Linux hosts) that is every process in it, for certain. Without one: their process groups,
        processes carrying the sandbox's marker in their environment, and processes whose working
        directory is inside the sandbox (one that detached with ``setsid env -i`` too); a process that
        left the sandbox folder and dropped its environment cannot be told apart then. That search
        reads every process in ``/proc``, so it is skipped when no command started since the last."""
        groups, started = set(self._groups), self._unswept
        self._unswept = False
        await super().stop()
        if self.cgroup is None and started:
            await asyncio.to_thread(kill_tree, groups, f"{MARKER_VARIABLE}={self.token}", self.layout.base)
