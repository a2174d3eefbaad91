"""The bubblewrap driver: the tempdir layout, with every command run inside ``bwrap``.

Example::

    sandbox = await BwrapSandbox.create(SandboxSpec(driver="bwrap", network=False))
    await sandbox.exec("touch ok")          # exit 0: the sandbox directory is writable
    await sandbox.exec("touch /etc/nope")   # exit 1: the rest of the host is read-only

Inside, the host filesystem is mounted read-only, the sandbox directory (root, HOME, TMPDIR, shims)
read-write at the same path, with a fresh ``/tmp`` (the running Python stays visible when it is
installed under ``/tmp``), ``/dev`` and ``/proc``, its own PID namespace
(nothing outlives the command) and, with ``network: false``, its own empty network namespace.
The host filesystem stays **readable**: this is a write boundary, not a confidentiality one.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from coder_eval.errors import SandboxError
from coder_eval.sandbox.base import ExecResult
from coder_eval.sandbox.process import run_in_group
from coder_eval.sandbox.tempdir import SAFE_PATH, TempdirSandbox

_problems: dict[str, str | None] = {}


def bwrap_argv(bwrap: str, writable: Path, cwd: Path, *, network: bool) -> list[str]:
    """The ``bwrap`` command line that confines a command to ``writable``.

    Example: ``bwrap_argv("/usr/bin/bwrap", base, base / "work", network=False) + ["--", "make"]``
    """
    return [
        *(bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"),
        *(arg for path in _kept_under_tmp() for arg in ("--ro-bind", path, path)),
        *("--bind", str(writable), str(writable), "--die-with-parent", "--unshare-pid"),
        *([] if network else ["--unshare-net"]),
        *("--chdir", str(cwd)),
    ]


def _kept_under_tmp() -> list[str]:
    """The running Python's installation, when it lives under ``/tmp`` (a checkout or CI clone there):
    the fresh ``/tmp`` would hide the interpreter that shims and the project's tools run with."""
    prefixes = {Path(p).resolve() for p in (sys.prefix, sys.base_prefix, Path(sys.executable).parent)}
    tmp = Path("/tmp").resolve()
    return sorted(str(p) for p in prefixes if p.is_relative_to(tmp) and p != tmp)


async def bwrap_problem() -> str | None:
    """Why bubblewrap cannot run here, or ``None`` when it can (probed once per process).

    Example: ``await bwrap_problem()`` -> ``"bwrap is not installed; install it with ..."``
    """
    path = shutil.which("bwrap")
    if path is None:
        return "bwrap is not installed; install it with 'apt-get install bubblewrap' or use driver 'tempdir'"
    if path not in _problems:
        with tempfile.TemporaryDirectory(prefix="coder_eval-probe-") as scratch:
            probe = [*bwrap_argv(path, Path(scratch), Path(scratch), network=False), "--", "/bin/true"]
            result = await run_in_group(probe, cwd=Path("/"), env={"PATH": ":".join(SAFE_PATH)}, timeout=30)
        _problems[path] = None if result.exit_code == 0 else _probe_failure(result)
    return _problems[path]


def _probe_failure(result: ExecResult) -> str:
    why = result.output.strip() or f"exit code {result.exit_code}"
    return (
        f"bwrap cannot set up its namespaces and mounts here ({why}); it needs root or unprivileged "
        "user namespaces; use driver 'tempdir' instead"
    )


class BwrapSandbox(TempdirSandbox):
    """A tempdir sandbox whose commands run in ``bwrap``: only the sandbox directory is writable."""

    @classmethod
    async def check_available(cls) -> None:
        """Raise ``SandboxError`` when bubblewrap is missing or cannot make namespaces here."""
        problem = await bwrap_problem()
        if problem is not None:
            raise SandboxError(f"sandbox driver 'bwrap' is unavailable: {problem}")

    def wrap(self, argv: Sequence[str], *, cwd: Path) -> list[str]:
        """``bwrap <mounts> --chdir <cwd> -- <argv>``.

        Example: ``sandbox.wrap(["claude", "-p", "hi"], cwd=sandbox.root)`` runs an agent's CLI
        under the same confinement as ``exec``.
        """
        bwrap = shutil.which("bwrap") or "bwrap"
        return [*bwrap_argv(bwrap, self.layout.base, cwd, network=self.spec.network), "--", *argv]
