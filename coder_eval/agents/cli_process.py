"""An agent CLI run inside the sandbox, its JSONL stdout read line by line as it is printed.

Example::

    async with CliProcess(argv, sandbox=request.sandbox, env=env) as cli:
        async for event in cli.events():        # each stdout line that is a JSON object
            recorder.handle(event)
        exit_code = await cli.wait()
    cli.stderr_tail                             # the last lines it wrote to stderr

``on_stderr`` sees each stderr line as it comes; when it returns True the CLI is killed (a CLI
that reports a hopeless retry loop only on stderr). With ``raw`` (a ``RawEventLog``), every stdout
and stderr line is also logged there as it comes (``coder_eval.agents.raw_events``).

The CLI is started through ``sandbox.wrap`` (bwrap confines it like any sandbox command; docker runs
it in the container, taking the variables by name) with exactly ``env`` (nothing inherited from the
host), as the leader of a new session, with a per-run token in its environment. Leaving the
block, normally or by cancellation (the task timeout), SIGKILLs the session, every descendant and
every process carrying the token, then waits for the CLI: no process of the run outlives it.
This is the one place an agent starts its CLI.

Bytes that are not UTF-8 never stop the stream: in a JSON line they are kept as the code points
Python's ``surrogateescape`` gives them (written escaped to the trajectory), in the text kept for error
messages as visible ``\\xNN`` escapes. A line longer than :data:`LINE_LIMIT` is skipped, and noted.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import uuid
from collections import deque
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from coder_eval.errors import AgentError
from coder_eval.sandbox import process

if TYPE_CHECKING:
    from coder_eval.agents.raw_events import RawEventLog
    from coder_eval.sandbox.base import Sandbox

TOKEN_VARIABLE = "CODER_EVAL_PROCESS_TOKEN"
"""Set in the CLI's environment; marks every process of one run (see :meth:`CliProcess.kill`)."""

LINE_LIMIT = 64 * 1024 * 1024
"""The longest stdout or stderr line read (a tool result inside one JSON event can be large): the
most the harness holds of one line."""


class CliProcess:
    """One run of an agent CLI; an async context manager (see the module docstring)."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        sandbox: Sandbox,
        env: dict[str, str],
        cwd: str | None = None,
        stdin: str | None = None,
        on_stderr: Callable[[str], bool] | None = None,
        raw: RawEventLog | None = None,
    ) -> None:
        self.argv = list(argv)
        self.sandbox = sandbox
        self.cwd = cwd or sandbox.workdir
        self.token = uuid.uuid4().hex
        self.env = {**env, TOKEN_VARIABLE: self.token}
        self.stdin = stdin
        self.on_stderr = on_stderr
        self.raw = raw
        self.stderr_tail: deque[str] = deque(maxlen=40)
        self.stdout_tail: deque[str] = deque(maxlen=5)
        self._proc: asyncio.subprocess.Process | None = None
        self._stderr_task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> CliProcess:
        argv = self.sandbox.wrap(self.argv, cwd=self.cwd, env_names=sorted(self.env))
        try:
            self._proc = await asyncio.create_subprocess_exec(
                *argv,
                cwd=self.cwd if Path(self.cwd).is_dir() else None,  # the workspace, where the host sees it
                env=self.env,
                stdin=asyncio.subprocess.PIPE if self.stdin is not None else asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                start_new_session=True,
                limit=LINE_LIMIT,
            )
        except OSError as exc:
            raise AgentError(f"cannot start {self.argv[0]}: {exc}") from exc
        if self.stdin is not None:
            assert self._proc.stdin is not None
            self._proc.stdin.write(self.stdin.encode("utf-8"))
            with contextlib.suppress(ConnectionError):
                await self._proc.stdin.drain()
            self._proc.stdin.close()
        self._stderr_task = asyncio.create_task(self._read_stderr())
        return self

    async def events(self) -> AsyncIterator[dict[str, Any]]:
        """Every stdout line that is a JSON object, as it is printed; other lines are kept in
        :attr:`stdout_tail` (a CLI's plain-text complaints end up there)."""
        assert self._proc is not None and self._proc.stdout is not None
        async for raw in _lines(self._proc.stdout, self.stdout_tail):
            line = raw.decode("utf-8", errors="surrogateescape").strip()
            if not line:
                continue
            try:
                event = json.loads(line)
            except (ValueError, RecursionError):  # not JSON, or past the parser's limits
                self.stdout_tail.append(_visible(raw))
                if self.raw is not None:
                    self.raw.line("stdout", line)
                continue
            if self.raw is not None:
                self.raw.event("stdout", event)
            if isinstance(event, dict):
                yield event

    async def wait(self) -> int:
        """The CLI's exit code (after its stderr is read to the end)."""
        assert self._proc is not None
        code = await self._proc.wait()
        if self._stderr_task is not None:
            await asyncio.wait({self._stderr_task}, timeout=2)
        return code

    def kill(self) -> None:
        """SIGKILL the CLI's session, its descendants and every process carrying the run's token."""
        if self._proc is not None:
            process.kill_tree([self._proc.pid], f"{TOKEN_VARIABLE}={self.token}")

    async def _read_stderr(self) -> None:
        assert self._proc is not None and self._proc.stderr is not None
        async for raw in _lines(self._proc.stderr, self.stderr_tail):
            line = raw.decode("utf-8", errors="backslashreplace").rstrip()
            if line:
                self.stderr_tail.append(line[:500])
            if line and self.raw is not None:
                self.raw.line("stderr", line)
            if line and self.on_stderr is not None and self.on_stderr(line):
                self.kill()  # the CLI is retrying what no retry can fix

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.kill()
        if self._proc is not None:
            await asyncio.shield(self._proc.wait())
        if self._stderr_task is not None:
            self._stderr_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._stderr_task

    def stderr_text(self, lines: int = 5) -> str:
        """The last ``lines`` of stderr (and unparsed stdout), joined for an error message."""
        tail = [*list(self.stdout_tail)[-2:], *list(self.stderr_tail)[-lines:]]
        return " | ".join(line.strip() for line in tail if line.strip())


async def _lines(stream: asyncio.StreamReader, tail: deque[str]) -> AsyncIterator[bytes]:
    """The lines of ``stream`` until its end; one over :data:`LINE_LIMIT` is dropped and noted in ``tail``."""
    while True:
        try:
            line = await stream.readline()
        except ValueError:  # the line passed the limit: the reader dropped what it held of it
            tail.append(f"[coder_eval: a line of more than {LINE_LIMIT} bytes was left out]")
            continue
        if not line:
            return
        yield line


def _visible(raw: bytes) -> str:
    """A line for an error message: bytes that are not UTF-8 as ``\\xNN``, at most 500 characters."""
    return raw.decode("utf-8", errors="backslashreplace").strip()[:500]
