"""The CLI launcher: a tiny script given to claude-agent-sdk as ``cli_path``.

Example::

    with Launcher(bundled_cli(), env_names, wrap=sandbox.wrap, cwd=sandbox.workdir) as launcher:
        options = ClaudeAgentOptions(cli_path=launcher.path, env={**env, **launcher.env}, ...)
        ...
        launcher.kill()     # the CLI and everything it started, e.g. on the task timeout

claude-agent-sdk always starts the CLI with ``os.environ`` merged under ``options.env``, so host
credentials would leak into the CLI and its tools. The launcher re-executes the CLI through
``env -i`` with only the variables it was built with (their *names*: the values still travel in
``options.env``, so no secret is written to disk), and through ``setsid``, so the CLI leads a new
session. :meth:`Launcher.kill` ends that session, every descendant and every session they lead, and
every process carrying the run's :data:`TOKEN_VARIABLE`. A sandbox that confines commands (``wrap``,
e.g. bubblewrap, or a docker container, which is given the variables by name) confines the CLI the
same way.
"""

from __future__ import annotations

import asyncio
import shlex
import shutil
import tempfile
import uuid
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

import claude_agent_sdk

from coder_eval.sandbox import process

Wrap = Callable[..., list[str]]

TOKEN_VARIABLE = "CODER_EVAL_PROCESS_TOKEN"
"""Set in the CLI's environment (see :attr:`Launcher.env`); marks every process of one run."""

_SCRIPT = """#!/bin/bash
# Runs Claude Code with only the named environment variables, as the leader of a new session.
echo $$ > {pid_file}
keep=()
for name in {names}; do
  if [[ -v $name ]]; then keep+=("$name=${{!name}}"); fi
done
exec {setsid} {env} -i "${{keep[@]}}" {argv} "$@"
"""


def bundled_cli() -> Path | None:
    """The Claude Code binary shipped inside claude-agent-sdk, else ``claude`` on the host PATH."""
    bundled = Path(claude_agent_sdk.__file__).parent / "_bundled" / "claude"
    if bundled.is_file():
        return bundled
    found = shutil.which("claude")
    return Path(found) if found else None


class Launcher:
    """A launcher script in a private temporary directory, removed on exit (after :meth:`kill`)."""

    def __init__(self, cli: Path, names: Iterable[str], *, wrap: Wrap | None = None, cwd: str) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="coder_eval-claude-"))
        self.token = uuid.uuid4().hex
        self.path = self.dir / "claude"
        self._pid_file = self.dir / "pid"
        self._killed = False
        kept = sorted({*names, TOKEN_VARIABLE})
        argv: Sequence[str] = wrap([str(cli)], cwd=cwd, env_names=kept) if wrap is not None else [str(cli)]
        script = _SCRIPT.format(
            pid_file=shlex.quote(str(self._pid_file)),
            names=" ".join(kept),
            setsid=shlex.quote(shutil.which("setsid") or "setsid"),
            env=shlex.quote(shutil.which("env") or "/usr/bin/env"),
            argv=shlex.join(argv),
        )
        self.path.write_text(script, encoding="utf-8")
        self.path.chmod(0o700)

    @property
    def env(self) -> dict[str, str]:
        """What the CLI's environment must add so that :meth:`kill` finds every process of the run."""
        return {TOKEN_VARIABLE: self.token}

    @property
    def pid(self) -> int | None:
        """The CLI's pid (= its session and process-group id) once it has started."""
        try:
            return int(self._pid_file.read_text(encoding="utf-8").strip())
        except (OSError, ValueError):
            return None

    def kill(self) -> None:
        """SIGKILL the CLI's session and every descendant of the CLI (idempotent: once the CLI has
        been killed, nothing of the run is left to start another process, so later calls read no
        process table)."""
        pid = self.pid
        if pid is not None and not self._killed:
            kill_tree(pid, self.token)
            self._killed = True

    def __enter__(self) -> Launcher:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.kill()
        shutil.rmtree(self.dir, ignore_errors=True)


def kill_tree(leader: int, token: str | None = None) -> None:
    """Stop, then SIGKILL, ``leader`` and every process it led to, and with ``token`` every process
    whose environment carries ``TOKEN_VARIABLE=token`` (see ``coder_eval.sandbox.process.kill_tree``).

    Example: ``kill_tree(launcher.pid, launcher.token)``.
    """
    process.kill_tree([leader], f"{TOKEN_VARIABLE}={token}" if token else None)


def cli_version(cli: Path) -> str | None:
    """The version recorded beside a bundled CLI (``claude.version``), without running it.

    Example: ``cli_version(bundled_cli())`` -> ``"2.1.332"``.
    """
    try:
        text = (cli.parent / "claude.version").read_text(encoding="utf-8")
    except OSError:
        return None
    return text.split()[0] if text.split() else None


SETTLE_S = 10.0
"""Seconds the SDK gets to wind down once its CLI has been killed."""


async def settle(stream: asyncio.Task[Any]) -> None:
    """Let the SDK wind down after the kill (it waits on a process that is gone by now); the task's
    own exception, if any, is retrieved so that it is not reported as never retrieved."""
    if not stream.done():
        stream.cancel()
    await asyncio.wait({stream}, timeout=SETTLE_S)
    if stream.done() and not stream.cancelled():
        stream.exception()
