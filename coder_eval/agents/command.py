"""``command``: any CLI agent, run from a command template in the sandbox.

``{prompt}`` in ``agent.command`` is replaced by the shell-quoted prompt; with
``prompt_on_stdin: true`` the prompt is also written to the command's stdin. A non-zero exit means
the agent crashed: its failure (``agent_error``), never ``invalid`` (an agent that exits non-zero
whenever it would fail must not leave its failures out of its pass rate). A provider error its
stream reports is only a claim, checked against the endpoint's record when there is one.

With ``events: none`` (the default) stdout becomes the final assistant message. With ``events:
claude-stream-json`` or ``events: atif`` stdout is read as that JSONL event stream
(``event_streams.py``): messages, tool calls and results, tokens, and the cost (the stream's own,
else priced from the dated table) are recorded as for a first-class agent.

Example::

    agent:
      kind: command
      command: my-agent --non-interactive --json --task {prompt}
      events: atif
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from coder_eval.agents.base import AgentRequest, AgentResult, EventSink
from coder_eval.agents.cli_spec import own_spec
from coder_eval.agents.command_spec import CommandSpec
from coder_eval.agents.event_streams import STREAMS
from coder_eval.agents.raw_events import RawEventLog
from coder_eval.agents.spec import resolve_env
from coder_eval.errors import AgentError
from coder_eval.pricing import cost_usd
from coder_eval.trajectory import Message


class CommandAgent:
    """Runs ``agent.command`` with the prompt."""

    def host_paths(self) -> list[Path]:
        return []

    async def run(self, request: AgentRequest, sink: EventSink) -> AgentResult:
        spec = own_spec(request, CommandSpec)
        command = spec.command.replace("{prompt}", shlex.quote(request.prompt))
        try:
            env = resolve_env(spec.env)
        except AgentError as exc:
            return AgentResult(invalid=True, status="infra_error", error=str(exc), cause="harness")
        if request.endpoint is not None:
            env.update(request.endpoint.env())
        result = await request.sandbox.exec(
            command, env=env, stdin=request.prompt if spec.prompt_on_stdin else None
        )
        if request.raw_events is not None:
            log_output(request.raw_events, result.stdout, result.stderr)
        if spec.events == "none":
            sink.write(Message(role="assistant", content=[{"type": "text", "text": result.stdout}]))
            outcome = AgentResult(num_turns=1, final_message=result.stdout)
        else:
            sink.write(Message(role="user", content=[{"type": "text", "text": request.prompt}]))
            outcome = read_stream(spec.events, result.stdout, sink)
        if result.exit_code != 0:
            tail = result.stderr.strip()[-500:]
            outcome.status = "agent_error"
            outcome.error = f"agent command exited {result.exit_code}: {tail}"
        return outcome


def log_output(raw: RawEventLog, stdout: str, stderr: str) -> None:
    """The command's output, line by line, in the raw event log: a JSON line as its event, any other
    line as text (the command's output is read once it exits)."""
    for line in filter(None, (text.strip() for text in stdout.splitlines())):
        try:
            raw.event("stdout", json.loads(line))
        except (ValueError, RecursionError):
            raw.line("stdout", line)
    for line in filter(None, (text.rstrip() for text in stderr.splitlines())):
        raw.line("stderr", line)


def read_stream(kind: str, stdout: str, sink: EventSink) -> AgentResult:
    """Record the JSONL event stream ``kind`` printed on ``stdout``; the result it reports."""
    stream = STREAMS[kind](sink)
    for line in stdout.splitlines():
        try:
            event = json.loads(line)
        except (ValueError, RecursionError):  # not JSON, or past the parser's limits
            continue
        if isinstance(event, dict):
            stream.handle(event)
    steps = stream.steps
    steps.finish()
    usage = steps.usage
    cost = stream.reported_cost
    if cost is None and usage.total:
        cost = cost_usd(steps.model, usage) if steps.model else None
    result = AgentResult(
        usage=usage,
        cost_usd=cost if usage.total or cost else 0.0,
        num_turns=steps.turns,
        final_message=steps.final_text,
        versions={f"command_{kind}": stream.version} if stream.version else {},
    )
    if stream.errors and not stream.completed:
        result.status, result.provider_claim = "agent_error", stream.errors[-1]
        result.error = f"the agent reported an error: {stream.errors[-1]}"
    return result
