"""``command``: any CLI agent, run from a command template in the sandbox.

``{prompt}`` in ``agent.command`` is replaced by the shell-quoted prompt; with
``prompt_on_stdin: true`` the prompt is also written to the command's stdin. stdout becomes the
final assistant message. A non-zero exit means the agent crashed: the episode is ``invalid``.

Example::

    agent:
      kind: command
      command: my-agent --non-interactive --task {prompt}
"""

from __future__ import annotations

import shlex

from coder_eval.agents.base import AgentRequest, AgentResult, EventSink
from coder_eval.trajectory import Message


class CommandAgent:
    """Runs ``agent.command`` with the prompt."""

    async def run(self, request: AgentRequest, sink: EventSink) -> AgentResult:
        spec = request.task.agent
        if not spec.command:
            return AgentResult(
                invalid=True, status="agent_error", error="agent.kind 'command' needs agent.command"
            )
        command = spec.command.replace("{prompt}", shlex.quote(request.prompt))
        env = dict(spec.env)
        if request.endpoint is not None:
            env.update(request.endpoint.env())
        result = await request.sandbox.exec(
            command, env=env, stdin=request.prompt if spec.prompt_on_stdin else None
        )
        sink.write(Message(role="assistant", content=[{"type": "text", "text": result.stdout}]))
        if result.exit_code != 0:
            tail = result.stderr.strip()[-500:]
            return AgentResult(
                invalid=True,
                status="agent_error",
                error=f"agent command exited {result.exit_code}: {tail}",
                final_message=result.stdout,
            )
        return AgentResult(num_turns=1, final_message=result.stdout)
