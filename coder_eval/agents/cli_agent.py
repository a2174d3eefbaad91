"""What the Codex, OpenCode and Gemini agents share: the environment layers, the run loop that
feeds a CLI's JSONL events to a recorder under the turn and budget limits, and the honest outcome.

Example::

    env = cli_env(sandbox.env, defaults, spec.env, endpoint_env, host_credentials)
    end = await run_cli(request, CliLaunch(argv, env), recorder, limits=Limits(max_turns=10))
    result = cli_result(recorder, end, cli_name="Codex")

``CliAgent.run`` is the one run of those three kinds: find the CLI, check and build its launch, write
the prompt, stream its events under the limits, map the end, record the CLI's version; each kind
fills in its steps (``program``, ``launch``, ``recorder``, ``versions``, and the optional ``check``,
``before_run`` and ``after_run``).

| what happened | status | invalid |
|---|---|---|
| the CLI finished its turn and exited 0 | completed | no |
| more model turns than ``max_turns`` (the CLI is stopped) | max_turns | no |
| over ``max_usd`` while streaming (the CLI is stopped) | budget_exceeded | no |
| the CLI reported a provider error (auth, 429, 5xx, no answer) | agent_error (``provider_claim``) | no |
| the CLI is missing or cannot start | infra_error | yes (``harness``) |
| the CLI crashed or exited without finishing | agent_error | no |

A claimed provider error is checked against the model endpoint's record by the episode
(``coder_eval.episode.record``): it makes the episode ``invalid`` only when the endpoint served it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from coder_eval.agents.base import AgentRequest, AgentResult, EventSink
from coder_eval.agents.cli_process import CliProcess
from coder_eval.agents.cli_spec import max_turns, own_spec
from coder_eval.agents.events import Steps
from coder_eval.agents.spec import CliAgentSpec
from coder_eval.errors import AgentError
from coder_eval.pricing import cost_usd, rates_for
from coder_eval.trajectory import Message, Status

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class Recorder(Protocol):
    """A CLI's event recorder: writes events, and knows whether the CLI finished and what failed."""

    steps: Steps
    completed: bool
    errors: list[str]

    def handle(self, event: dict[str, object]) -> None: ...

    def stderr_line(self, line: str) -> bool:
        """Read one stderr line; True when the CLI must be stopped (it retries what cannot succeed)."""
        ...


@dataclass(frozen=True)
class CliLaunch:
    """How to start the CLI: argv, its complete environment, what goes to its stdin."""

    argv: list[str]
    env: dict[str, str]
    stdin: str | None = None


@dataclass(frozen=True)
class Limits:
    """Limits checked while the CLI streams (token budgets are the watch's: ``coder_eval.episode.watch``)."""

    max_turns: int | None = None
    max_usd: float | None = None


@dataclass
class CliEnd:
    """How the run loop ended: the exit code (None if killed), why it was stopped, stderr."""

    exit_code: int | None = None
    stopped: Status | None = None
    reason: str | None = None
    stderr: str = ""


def cli_env(
    sandbox_env: Mapping[str, str],
    defaults: Mapping[str, str],
    agent_env: Mapping[str, str],
    fixed: Mapping[str, str],
) -> dict[str, str]:
    """The CLI's whole environment, later layers winning: the sandbox's scrubbed environment, the
    agent's quiet defaults, ``agent.env``, then what nothing may override (the scripted endpoint,
    the per-episode config paths). Raises ``AgentError`` on a name that is not an identifier."""
    env = {**sandbox_env, **defaults, **agent_env, **fixed}
    bad = [name for name in env if not _NAME.match(name)]
    if bad:
        raise AgentError(f"agent.env: invalid variable names {bad}")
    return env


def host_credentials(names: tuple[str, ...], host: Mapping[str, str]) -> dict[str, str]:
    """The named host variables that are set (forwarded for real-model runs only)."""
    return {name: host[name] for name in names if host.get(name)}


async def run_cli(request: AgentRequest, launch: CliLaunch, recorder: Recorder, limits: Limits) -> CliEnd:
    """Run the CLI in the sandbox, every JSONL event to ``recorder``, stopping it at a limit.

    Cancellation (the task timeout) kills the CLI and all it started before it propagates.
    """
    end = CliEnd()
    try:
        async with CliProcess(
            launch.argv,
            sandbox=request.sandbox,
            env=launch.env,
            stdin=launch.stdin,
            on_stderr=recorder.stderr_line,
            raw=request.raw_events,
        ) as cli:
            async for event in cli.events():
                recorder.handle(event)
                stop = _over_limit(recorder.steps, limits)
                if stop is not None:
                    end.stopped, end.reason = stop
                    cli.kill()
                    break
            code = await cli.wait()
            end.exit_code = None if end.stopped else code
            end.stderr = cli.stderr_text()
    finally:
        recorder.steps.finish()  # what was gathered is written, on a timeout too
    return end


def _over_limit(steps: Steps, limits: Limits) -> tuple[Status, str] | None:
    if limits.max_turns is not None and steps.turns > limits.max_turns:
        return "max_turns", f"more than max_turns {limits.max_turns} model turns; the run was stopped"
    used = steps.usage
    if limits.max_usd is not None and steps.model is not None and rates_for(steps.model) is not None:
        cost = cost_usd(steps.model, used) or 0.0
        if cost > limits.max_usd:
            return "budget_exceeded", f"cost ${cost:.4f} > max_usd {limits.max_usd:g}; the run was stopped"
    return None


def cli_result(recorder: Recorder, end: CliEnd, cli_name: str) -> AgentResult:
    """The :class:`AgentResult` of a run (see the table in the module docstring)."""
    steps = recorder.steps
    usage = steps.usage
    model = steps.model
    result = AgentResult(
        usage=usage,
        cost_usd=(0.0 if usage.total == 0 else cost_usd(model, usage)) if model else None,
        num_turns=steps.turns,
        final_message=steps.final_text,
    )
    result.status, result.error, result.provider_claim = _verdict(recorder, end, cli_name)
    return result


def _verdict(recorder: Recorder, end: CliEnd, cli_name: str) -> tuple[Status, str | None, str | None]:
    """(status, error, the provider error the CLI claimed): nothing the CLI does makes it invalid."""
    if end.stopped is not None:
        return end.stopped, end.reason, None
    finished = recorder.completed and end.exit_code == 0
    if finished and not (recorder.errors and not recorder.completed):
        return "completed", None, None
    detail = f"; stderr: {end.stderr}" if end.stderr else ""
    if recorder.errors:
        claim = f"model API error: {recorder.errors[-1]}"
        return "agent_error", f"{cli_name} exited {end.exit_code} reporting a {claim}{detail}", claim
    return "agent_error", f"{cli_name} exited {end.exit_code} without finishing its turn{detail}", None


Program = TypeVar("Program")
"""What a kind runs: a binary's path, or an interpreter and its script."""
Spec = TypeVar("Spec", bound=CliAgentSpec)


class CliAgent(Generic[Program, Spec]):
    """The run the JSONL CLI agents share (see the module docstring); a kind fills in the steps."""

    cli_name: ClassVar[str]
    """How errors name the CLI (``"Codex"``)."""
    spec_class: type[Spec]

    def program(self) -> tuple[Program | None, str]:
        """What to run, or None and what is missing (``"Codex CLI not found (...)"``)."""
        raise NotImplementedError

    def check(self, request: AgentRequest, spec: Spec) -> None:
        """Refuse (``AgentError``) what this CLI cannot run here. Default: nothing."""

    async def launch(
        self, request: AgentRequest, spec: Spec, program: Program
    ) -> tuple[CliLaunch, str | None]:
        """The CLI's argv and environment (its config written into the sandbox), and the model named."""
        raise NotImplementedError

    def recorder(self, sink: EventSink, model: str | None) -> Any:
        """The recorder of this CLI's events (a :class:`Recorder`)."""
        raise NotImplementedError

    def versions(self, program: Program) -> dict[str, str]:
        """The CLI's version, without running it."""
        raise NotImplementedError

    async def before_run(
        self, request: AgentRequest, sink: EventSink, spec: Spec, program: Program, launch: CliLaunch
    ) -> None:
        """Written to the trajectory after the prompt, before the CLI runs. Default: nothing."""

    def after_run(self, spec: Spec, result: AgentResult) -> AgentResult:
        """The result, as this kind judges it further. Default: as mapped."""
        return result

    async def run(self, request: AgentRequest, sink: EventSink) -> AgentResult:
        program, missing = self.program()
        if program is None:
            return AgentResult(invalid=True, status="infra_error", error=missing, cause="harness")
        try:
            spec = own_spec(request, self.spec_class)
            self.check(request, spec)
            launch, model = await self.launch(request, spec, program)
        except (AgentError, ValueError) as exc:
            return AgentResult(invalid=True, status="infra_error", error=str(exc), cause="harness")
        sink.write(Message(role="user", content=[{"type": "text", "text": request.prompt}]))
        await self.before_run(request, sink, spec, program, launch)
        recorder = self.recorder(sink, model)
        limits = request.limits
        max_usd = limits.max_usd if request.endpoint is None else None  # a scripted model has no price
        end = await run_cli(request, launch, recorder, Limits(max_turns(spec, limits), max_usd))
        result = cli_result(recorder, end, self.cli_name)
        result.versions = self.versions(program)
        return self.after_run(spec, result)
