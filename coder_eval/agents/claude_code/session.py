"""One run of the Claude Code CLI in a sandbox: the public seam the ``claude-code`` agent and the
agent judge share.

Example::

    cli = find_cli()                                   # None when claude-agent-sdk has no CLI
    env = session_env(sandbox.env, {"MY_FLAG": "1"}, endpoint)   # AgentError on a bad name
    end = await run_cli(
        cli, sandbox, env, sink, "Fix the bug.",
        lambda env, cli_path: ClaudeAgentOptions(cwd=sandbox.workdir, env=env, cli_path=str(cli_path)),
        watch=lambda message, progress: None,          # or a reason to stop now ("over budget")
        timeout=300, turn_timeout=60,
    )
    end.result.status, end.result.usage, end.model, end.version, end.timed_out

Every run goes the same way, whoever asks for it: the CLI is started through the ``Launcher``
(``env -i`` with only ``env``'s names, a new session, the sandbox's ``wrap`` around it, so a bwrap
or docker sandbox confines the CLI like any command), every message is recorded to ``sink`` as it
streams, the run ends at the CLI's result, at ``timeout`` (the whole run) or ``turn_timeout`` (the
longest silence), when ``watch`` names a reason to stop, or when the CLI is retrying a failed
authentication; then the CLI and everything it started are killed, and the end is mapped to an
``AgentResult`` honestly (``outcome.py``).
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections import deque
from collections.abc import AsyncGenerator, AsyncIterable, AsyncIterator, Callable, Mapping
from contextlib import aclosing, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple, Protocol, cast

from claude_agent_sdk import ClaudeAgentOptions, Transport, query
from claude_agent_sdk._internal.transport.subprocess_cli import SubprocessCLITransport

from coder_eval.agents.base import AgentResult, EventSink, ModelEndpoint
from coder_eval.agents.claude_code.environment import SDK_VARIABLES, bad_names, cli_env
from coder_eval.agents.claude_code.launcher import Launcher, bundled_cli, cli_version, settle
from coder_eval.agents.claude_code.outcome import agent_result
from coder_eval.agents.claude_code.recorder import Recorder
from coder_eval.agents.raw_events import RawEventLog
from coder_eval.errors import AgentError
from coder_eval.sandbox.base import Sandbox
from coder_eval.trajectory import Usage

OptionsFor = Callable[[dict[str, str], Path], ClaudeAgentOptions]
"""The SDK options of a run, given the CLI's environment and the launcher's path (the ``cli_path``)."""


class Progress(Protocol):
    """What the run has shown so far: the model the CLI named and the tokens it has used."""

    @property
    def model(self) -> str | None: ...

    @property
    def usage(self) -> Usage: ...


Watch = Callable[[Any, Progress], str | None]
"""Called with each SDK message once recorded, and the run's progress: a reason to stop now, or None."""
Prompt = str | AsyncIterable[dict[str, Any]]


@dataclass(frozen=True)
class SessionEnd:
    """How a run of the CLI ended: the mapped result and what the CLI said about itself."""

    result: AgentResult
    model: str | None
    version: str | None
    hopeless: bool
    timed_out: bool


class _Ended(NamedTuple):
    error: BaseException | None = None
    stopped: str | None = None


def find_cli() -> Path | None:
    """The Claude Code CLI bundled with claude-agent-sdk, or None."""
    return bundled_cli()


def version_of(cli: Path) -> str | None:
    """What ``cli --version`` says, or None."""
    return cli_version(cli)


def cli_host_paths() -> list[Path]:
    """The CLI's folder, when it is not inside the Python environment running coder_eval (a sandbox
    must show it to run the CLI)."""
    cli = bundled_cli()
    if cli is None or cli.resolve().is_relative_to(Path(sys.prefix).resolve()):
        return []
    return [cli.resolve().parent]


def session_env(
    sandbox_env: Mapping[str, str], extra: Mapping[str, str], endpoint: ModelEndpoint | None
) -> dict[str, str]:
    """The CLI's whole environment (``environment.cli_env``); ``AgentError`` naming invalid names."""
    env = cli_env(sandbox_env, extra, endpoint, os.environ)
    bad = bad_names(env)
    if bad:
        raise AgentError(f"agent.env: invalid variable names {bad}")
    return env


async def run_cli(
    cli: Path,
    sandbox: Sandbox,
    env: dict[str, str],
    sink: EventSink,
    prompt: Prompt,
    options_for: OptionsFor,
    *,
    watch: Watch | None = None,
    timeout: float | None = None,
    turn_timeout: float | None = None,
    stderr_lines: int = 50,
    raw: RawEventLog | None = None,
) -> SessionEnd:
    """Run the CLI once in ``sandbox`` to its end (see the module); a cancellation kills it first.
    ``raw``: where every JSON event the CLI prints, and every stderr line, is logged as it comes."""
    recorder, stderr = Recorder(sink), deque[str](maxlen=stderr_lines)
    timed_out = False
    with Launcher(cli, [*env, *SDK_VARIABLES], wrap=sandbox.wrap, cwd=sandbox.workdir) as launcher:
        options = options_for({**env, **launcher.env}, launcher.path)
        options.stderr = stderr.append if raw is None else _both(stderr.append, raw)
        transport = RawTee(prompt, options, raw) if raw is not None else None
        stream = asyncio.create_task(
            _stream(prompt, options, recorder, launcher, watch, turn_timeout, transport)
        )
        try:
            ended = await asyncio.wait_for(asyncio.shield(stream), timeout)
        except TimeoutError:
            ended, timed_out = _Ended(), True
        finally:
            launcher.kill()
            await settle(stream)
            recorder.flush_all()
    result = agent_result(recorder, ended.error, list(stderr), ended.stopped)
    return SessionEnd(result, recorder.model, recorder.version, recorder.hopeless, timed_out)


async def _stream(
    prompt: Prompt,
    options: ClaudeAgentOptions,
    recorder: Recorder,
    launcher: Launcher,
    watch: Watch | None,
    quiet: float | None,
    transport: Transport | None = None,
) -> _Ended:
    """Feed every SDK message to ``recorder``; stop early (killing the CLI) when the CLI is retrying
    an authentication failure, when ``watch`` says so, or after ``quiet`` seconds without a message."""
    loop = asyncio.get_running_loop()
    turn = asyncio.timeout_at(loop.time() + quiet if quiet else None)
    try:
        messages = cast(AsyncGenerator[Any, None], query(prompt=prompt, options=options, transport=transport))
        async with aclosing(messages), turn:
            async for message in messages:
                if quiet:
                    turn.reschedule(loop.time() + quiet)
                recorder.handle(message)
                stopped = watch(message, recorder) if watch is not None else None
                if recorder.hopeless or stopped is not None:
                    launcher.kill()
                    turn.reschedule(None)
                    await _drain(messages)
                    return _Ended(stopped=None if recorder.hopeless else stopped)
    except Exception as exc:  # the SDK's errors and a CLI that died are outcomes, mapped by agent_result
        if isinstance(exc, TimeoutError) and turn.expired():
            exc = TimeoutError(f"no message from the CLI for {quiet:g} s (turn_timeout)")
        return _Ended(error=exc)
    return _Ended()


DRAIN_S = 5.0
"""Seconds a stopped run's messages are read for, to the end of the killed CLI's output."""


async def _drain(messages: AsyncIterator[Any]) -> None:
    """Read, and leave unrecorded, what the killed CLI still had in its output, to its end: the SDK's
    reader then finishes and the pipe is closed. A reader cancelled mid-stream leaves the pipe's
    transport open until the garbage collector closes it, which at the process's exit finds the
    event loop closed and prints an error."""
    with suppress(Exception):
        async with asyncio.timeout(DRAIN_S):
            async for _ in messages:
                pass


class RawTee(Transport):
    """The SDK's own subprocess transport, with every JSON event it reads from the CLI's stdout also
    written to ``raw`` (``coder_eval.agents.raw_events``) before the SDK parses it."""

    def __init__(self, prompt: Prompt, options: ClaudeAgentOptions, raw: RawEventLog) -> None:
        self.inner, self.raw = SubprocessCLITransport(prompt=prompt, options=options), raw

    async def connect(self) -> None:
        await self.inner.connect()

    async def write(self, data: str) -> None:
        await self.inner.write(data)

    def read_messages(self) -> AsyncIterator[dict[str, Any]]:
        return self._tee()

    async def _tee(self) -> AsyncIterator[dict[str, Any]]:
        async for message in self.inner.read_messages():
            self.raw.event("stdout", message)
            yield message

    async def close(self) -> None:
        await self.inner.close()

    def is_ready(self) -> bool:
        return self.inner.is_ready()

    async def end_input(self) -> None:
        await self.inner.end_input()


def _both(keep: Callable[[str], None], raw: RawEventLog) -> Callable[[str], None]:
    """A stderr callback that keeps each line (``keep``) and logs it raw."""

    def both(line: str) -> None:
        keep(line)
        raw.line("stderr", line)

    return both
