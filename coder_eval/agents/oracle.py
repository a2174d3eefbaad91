"""``oracle``: runs the task's ``reference_solution``, proving the task solvable and its graders right.

The script is split into steps at blank lines; each step runs in a fresh ``bash -e`` from the sandbox
root and is recorded as one ``Bash`` tool call. The first failing step stops the oracle. What the
last step printed is the oracle's final answer, so ``message_matches`` criteria validate too.

Example::

    reference_solution: |
      sed -i 's/a - b/a + b/' calc/core.py

      python -m pytest -q
"""

from __future__ import annotations

import re
import time
from pathlib import Path

from coder_eval.agents.base import AgentRequest, AgentResult, EventSink
from coder_eval.sandbox.base import ExecResult
from coder_eval.trajectory import TOOL_OUTPUT_LIMIT, Message, ToolCall, ToolResult

HEREDOC = re.compile(r"<<-?\s*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\1")


def steps(script: str) -> list[str]:
    """Blank-line-separated blocks of a script (a heredoc's blank lines stay inside its block);
    blocks holding only comments are dropped.

    Example: ``steps("a\\nb\\n\\nc")`` -> ``["a\\nb", "c"]``
    """
    blocks: list[list[str]] = [[]]
    terminator: str | None = None
    for line in script.splitlines():
        if terminator is not None:
            blocks[-1].append(line)
            terminator = None if line.strip() == terminator else terminator
        elif not line.strip():
            blocks.append([])
        else:
            blocks[-1].append(line)
            opened = HEREDOC.findall(line)
            terminator = opened[-1][1] if opened else None
    texts = ["\n".join(block) for block in blocks]
    return [t for t in texts if any(ln.strip() and not ln.strip().startswith("#") for ln in t.splitlines())]


class OracleAgent:
    """Runs the reference solution."""

    def host_paths(self) -> list[Path]:
        return []

    async def run(self, request: AgentRequest, sink: EventSink) -> AgentResult:
        script = request.reference_script
        if not script:
            return AgentResult(
                invalid=True,
                status="agent_error",
                error="the task has no reference_solution",
                cause="harness",
            )
        answer = "Reference solution applied."
        blocks = steps(script)
        for number, step in enumerate(blocks, start=1):
            result = await self._step(request, sink, number, step)
            if result.exit_code != 0:
                message = f"reference solution step {number} exited {result.exit_code}"
                sink.write(Message(role="assistant", content=[{"type": "text", "text": message}]))
                return AgentResult(num_turns=number, final_message=message)
            answer = result.stdout.strip() or answer
        sink.write(Message(role="assistant", content=[{"type": "text", "text": answer}]))
        return AgentResult(num_turns=len(blocks), final_message=answer)

    @staticmethod
    async def _step(request: AgentRequest, sink: EventSink, number: int, step: str) -> ExecResult:
        """Run one step as a recorded ``Bash`` tool call."""
        call_id = f"oracle-{number}"
        sink.write(ToolCall(id=call_id, name="Bash", input={"command": step}))
        started = time.monotonic()
        result = await request.sandbox.exec(f"set -e\n{step}")
        sink.write(
            ToolResult(
                id=call_id,
                output=result.output[:TOOL_OUTPUT_LIMIT],
                output_chars=len(result.output),
                is_error=result.exit_code != 0,
                exit_code=result.exit_code,
                duration_s=time.monotonic() - started,
            )
        )
        return result
