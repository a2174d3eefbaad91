"""Steps: a CLI's event stream gathered into assistant messages, each followed by its tool calls
and their results, as the trajectory wants them.

Example::

    steps = Steps(sink, model="gpt-5.5")
    steps.text("Let me look.")
    steps.call("c1", "exec_command", {"cmd": "ls"})
    steps.result("c1", "a.py\\n", exit_code=0)
    steps.text("Done.")                       # text after a result: the next assistant message
    steps.finish(Usage(input_tokens=900, output_tokens=40))   # usage known per turn only
    steps.turns, steps.usage

One model response is text and tool calls, then the CLI runs the tools. So a step ends when text
or a call arrives after a result, when the CLI says so (:meth:`end_step`, with that response's
usage) or at the end. A step is written when it ends: one ``message`` (text and ``tool_use``
blocks, its usage when known), its ``tool_call`` events, then their ``tool_result`` events with the
time they came back. Usage a CLI reports only per turn goes on the turn's last message, so
message usage always adds up to the run's total.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from coder_eval.agents.base import EventSink
from coder_eval.trajectory import TOOL_OUTPUT_LIMIT, Message, ToolCall, ToolResult, Usage, now


def field_of(data: Any, key: str) -> dict[str, Any]:
    """``data[key]`` when both are JSON objects, else ``{}`` (CLI events are read defensively).

    Example: ``field_of({"part": {"tool": "bash"}}, "part")`` -> ``{"tool": "bash"}``.
    """
    value = data.get(key) if isinstance(data, dict) else None
    return value if isinstance(value, dict) else {}


@dataclass
class _Step:
    seen: datetime = field(default_factory=now)
    texts: list[str] = field(default_factory=list)
    calls: list[ToolCall] = field(default_factory=list)
    results: list[ToolResult] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (self.texts or self.calls or self.results)


class Steps:
    """Writes a CLI's messages, calls and results to ``sink`` step by step (see the module docstring)."""

    def __init__(self, sink: EventSink, model: str | None = None) -> None:
        self.sink = sink
        self.model = model
        self.usage = Usage()
        self.turns = 0
        self.calls = 0
        self.final_text: str | None = None
        self._step = _Step()
        self._started: dict[str, float] = {}
        self._written_usage = False

    def text(self, text: str, *, append: bool = False) -> None:
        """Assistant text; ``append`` continues the last text block (a streamed delta)."""
        if not text:
            return
        self._next_if_answered()
        if append and self._step.texts:
            self._step.texts[-1] += text
        else:
            self._step.texts.append(text)

    def call(self, call_id: str, name: str, tool_input: dict[str, Any]) -> None:
        """A tool call the model made."""
        self._next_if_answered()
        self._started[call_id] = time.monotonic()
        self._step.calls.append(ToolCall(id=call_id, name=name, input=tool_input))
        self.calls += 1

    def result(
        self, call_id: str, output: str, *, is_error: bool = False, exit_code: int | None = None
    ) -> None:
        """The result of call ``call_id``."""
        started = self._started.pop(call_id, None)
        self._step.results.append(
            ToolResult(
                id=call_id,
                output=output[:TOOL_OUTPUT_LIMIT],
                output_chars=len(output),
                is_error=is_error,
                exit_code=exit_code,
                duration_s=None if started is None else round(time.monotonic() - started, 4),
            )
        )

    def end_step(self, usage: Usage | None = None) -> None:
        """The CLI says one model response (and its tools) is over, with its usage when known."""
        self._write(usage)

    def finish(self, usage: Usage | None = None) -> None:
        """The end of a turn: write what is pending; ``usage`` is the turn's total when the CLI
        reports it only per turn (it goes on the last message)."""
        self._write(usage)

    def _next_if_answered(self) -> None:
        if self._step.results:
            self._write(None)

    def _write(self, usage: Usage | None) -> None:
        step, self._step = self._step, _Step()
        if step.empty and usage is None:
            return
        if usage is not None:
            self.usage = self.usage + usage
        content: list[dict[str, Any]] = [{"type": "text", "text": text} for text in step.texts]
        content += [{"type": "tool_use", "id": c.id, "name": c.name, "input": c.input} for c in step.calls]
        if content:
            self.turns += 1
        if content or usage is not None:
            message = Message(ts=step.seen, role="assistant", content=content, model=self.model, usage=usage)
            self.sink.write(message)
        if step.texts:
            self.final_text = "\n".join(step.texts)
        for call in step.calls:
            self.sink.write(call)
        for result in step.results:
            self.sink.write(result)
