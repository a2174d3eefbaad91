"""A trajectory read as a transcript: tool calls with their results, shell commands, assistant text.

Tool calls come from ``tool_call`` events and, for agents that record only messages, from the
``tool_use`` blocks of assistant messages (one call per id, whichever comes first); results likewise
from ``tool_result`` events and the ``tool_result`` blocks of user messages. Sub-agent calls count.
Tool names are compared in one vocabulary (``coder_eval.agents.tools``): Codex's ``exec_command``,
OpenCode's ``bash`` and Gemini CLI's ``run_shell_command`` are all ``Bash``.

Example::

    for step in tool_steps(ctx.events):
        if step.name == "Bash" and step.succeeded:
            print(step.index, step.command)
    final_text(ctx.events, ctx.final_message)   # -> "All 12 tests pass."
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from coder_eval.agents.tools import canonical_input, canonical_name
from coder_eval.patterns import search
from coder_eval.trajectory import Event, Message, ToolCall, ToolResult

DETAIL_LIMIT = 50
"""At most this many items in a details list, so a long episode keeps its criterion line readable."""


@dataclass(frozen=True)
class ToolStep:
    """One tool call, its position among all calls (from 0), and its result (None if none came back)."""

    index: int
    call: ToolCall
    result: ToolResult | None

    @property
    def name(self) -> str:
        """The tool's canonical name (``exec_command`` -> ``Bash``); ``call.name`` is the agent's."""
        return canonical_name(self.call.name)

    @property
    def command(self) -> str:
        """The input's ``command`` when it is a string (Bash), else the input as JSON."""
        command = canonical_input(self.call.name, self.call.input).get("command")
        return command if isinstance(command, str) else self.input_text

    @property
    def input_text(self) -> str:
        """The input as JSON, the text ``input_pattern`` regexes are searched in."""
        return json.dumps(self.call.input, ensure_ascii=False)

    @property
    def succeeded(self) -> bool:
        """A result came back, it is not an error, and its exit code (if any) is 0."""
        result = self.result
        return result is not None and not result.is_error and result.exit_code in (None, 0)

    def describe(self, limit: int = 300) -> str:
        """``"#3 Bash: pytest -q"``: short enough for a details list."""
        text = self.command if self.name == "Bash" else self.input_text
        text = text if len(text) <= limit else text[: limit - 1] + "…"
        return f"#{self.index} {self.name}: {text}"


def matches_tool(step: ToolStep, tool: str, input_pattern: str | None = None) -> bool:
    """The step calls ``tool`` (any agent's name for it) and its JSON input contains ``input_pattern``
    (``re.search``)."""
    if step.name != canonical_name(tool):
        return False
    return input_pattern is None or search(input_pattern, step.input_text) is not None


def tool_steps(events: Sequence[Event]) -> list[ToolStep]:
    """Every tool call in order, each paired with its result by id."""
    calls: dict[str, ToolCall] = {}
    results: dict[str, ToolResult] = {}
    for event in events:
        if isinstance(event, ToolCall):
            calls.setdefault(event.id, event)
        elif isinstance(event, ToolResult):
            results.setdefault(event.id, event)
        elif isinstance(event, Message):
            for call in _calls_in(event):
                calls.setdefault(call.id, call)
            for result in _results_in(event):
                results.setdefault(result.id, result)
    return [ToolStep(i, call, results.get(call_id)) for i, (call_id, call) in enumerate(calls.items())]


def _calls_in(message: Message) -> Iterator[ToolCall]:
    if message.role != "assistant":
        return
    for block in message.content:
        if block.get("type") == "tool_use" and isinstance(block.get("id"), str):
            tool_input = block.get("input")
            yield ToolCall(
                id=block["id"],
                name=str(block.get("name", "")),
                input=tool_input if isinstance(tool_input, dict) else {},
                parent_tool_use_id=message.parent_tool_use_id,
            )


def _results_in(message: Message) -> Iterator[ToolResult]:
    if message.role != "user":
        return
    for block in message.content:
        if block.get("type") == "tool_result" and isinstance(block.get("tool_use_id"), str):
            output = _block_text(block.get("content"))
            yield ToolResult(
                id=block["tool_use_id"],
                output=output,
                output_chars=len(output),
                is_error=bool(block.get("is_error")),
            )


def _block_text(content: Any) -> str:
    """A content field as text: a string, or the text of a list of blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text"
        )
    return ""


def message_text(message: Message) -> str:
    """The text blocks of one message, joined by newlines."""
    return _block_text(message.content)


def assistant_texts(events: Sequence[Event]) -> list[str]:
    """The text of every assistant message that has any, in order (sub-agents included)."""
    texts = (message_text(e) for e in events if isinstance(e, Message) and e.role == "assistant")
    return [text for text in texts if text.strip()]


def final_text(events: Sequence[Event], final_message: str | None = None) -> str:
    """The agent's final answer: ``final_message`` when the agent reported one, else the text of the
    last top-level assistant message that has text, else ``""``."""
    if final_message:
        return final_message
    for event in reversed(events):
        if isinstance(event, Message) and event.role == "assistant" and event.parent_tool_use_id is None:
            text = message_text(event)
            if text.strip():
                return text
    return ""
