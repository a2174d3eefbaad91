"""Trajectory events -> ATIF steps, for one agent (the top level, or one sub-agent).

A message is a step (assistant -> ``agent``, user -> ``user``, system -> ``system``); the tool calls
that follow an assistant message join its step, and each tool result joins the step of its call as an
observation result. Tool calls with no assistant message before them (an oracle's scripted commands)
get an agent step of their own with an empty message. Steps are plain dicts, validated once as a
whole document by ``AtifTrajectory``.

Example::

    steps = Steps()
    for event in events:
        steps.add(event)
    steps.steps      # [{"source": "user", "message": "...", ...}, ...]
"""

from __future__ import annotations

import json
from typing import Any

from coder_eval.trajectory import Event, Message, ToolCall, ToolResult, Usage

Step = dict[str, Any]
SOURCES = {"assistant": "agent", "user": "user", "system": "system"}
SPOKEN = frozenset({"text", "thinking", "tool_use"})
"""Content blocks a step carries in its own fields; any other block is kept in the step's extra."""
_RESULT_FIELDS = frozenset({"type", "schema_version", "ts", "id", "output"})
"""ToolResult fields the observation result holds itself; the rest (is_error, exit_code, ...) go to
its extra, so fields added to the trajectory later are carried over too."""


def metrics_of(usage: Usage | None) -> dict[str, Any] | None:
    """ATIF metrics of one model call: ``prompt_tokens`` counts cached input too, as ATIF defines it.

    Example: ``metrics_of(Usage(input_tokens=3, cache_read_tokens=9))["prompt_tokens"]`` -> ``12``
    """
    if usage is None:
        return None
    return {
        "prompt_tokens": usage.input_tokens + usage.cache_read_tokens + usage.cache_creation_tokens,
        "completion_tokens": usage.output_tokens,
        "cached_tokens": usage.cache_read_tokens,
        "extra": {"input_tokens": usage.input_tokens, "cache_creation_tokens": usage.cache_creation_tokens},
    }


def joined(blocks: list[dict[str, Any]], kind: str, key: str) -> str:
    """The ``key`` texts of the blocks of type ``kind``, separated by blank lines."""
    return "\n\n".join(b[key] for b in blocks if b.get("type") == kind and isinstance(b.get(key), str))


class Steps:
    """The steps of one agent, built event by event."""

    def __init__(self) -> None:
        self.steps: list[Step] = []
        self.by_call: dict[str, Step] = {}
        self._open: Step | None = None
        self._open_ids: set[str] = set()

    def add(self, event: Event) -> None:
        """Add one event; events that are no step (start, criteria, end, anything new) are ignored."""
        if isinstance(event, Message):
            self.message(event)
        elif isinstance(event, ToolCall):
            self.call(event)
        elif isinstance(event, ToolResult):
            self.result(event)

    def message(self, event: Message) -> None:
        blocks = event.content
        step: Step = {"source": SOURCES[event.role], "timestamp": event.ts.isoformat()}
        step["message"] = joined(blocks, "text", "text")
        if event.role == "system" and not step["message"] and blocks:
            step["message"] = json.dumps(blocks, sort_keys=True, default=str)
        extra: dict[str, Any] = {"simulated": True} if event.simulated else {}
        other = [b for b in blocks if b.get("type") not in SPOKEN]
        if other and event.role != "system":
            extra["content"] = other
        if event.role == "assistant":
            step["model_name"] = event.model
            step["reasoning_content"] = joined(blocks, "thinking", "thinking") or None
            step["metrics"] = metrics_of(event.usage)
            step["llm_call_count"] = 1 if event.usage is not None or event.model else None
        step["extra"] = extra or None
        self.steps.append(step)
        self._open = step if event.role == "assistant" else None
        self._open_ids = {str(b.get("id")) for b in blocks if b.get("type") == "tool_use"}

    def call(self, event: ToolCall) -> None:
        """Join the open assistant step when it announced this call (or announced none and has no
        results yet); otherwise start an agent step of its own."""
        step = self._open
        announced = event.id in self._open_ids or not self._open_ids
        if step is None or not announced or "observation" in step:
            step = {"source": "agent", "timestamp": event.ts.isoformat(), "message": ""}
            self.steps.append(step)
            self._open, self._open_ids = step, set()
        call = {"tool_call_id": event.id, "function_name": event.name, "arguments": event.input}
        step.setdefault("tool_calls", []).append(call)
        self.by_call[event.id] = step

    def result(self, event: ToolResult) -> None:
        """Join the step of its call; a result whose call was never recorded gets a system step."""
        extra = event.model_dump(mode="json", exclude=set(_RESULT_FIELDS), exclude_none=True)
        step = self.by_call.get(event.id)
        known = step is not None
        if step is None:
            message = f"The result of tool call {event.id}, whose call was not recorded."
            step = {"source": "system", "timestamp": event.ts.isoformat(), "message": message}
            self.steps.append(step)
            extra["tool_use_id"] = event.id
        result = {"source_call_id": event.id if known else None, "content": event.output, "extra": extra}
        self._results(step).append(result)

    def refer(self, call_id: str) -> None:
        """Point the result of ``call_id`` at the sub-agent trajectory it spawned (embedded by that id)."""
        step = self.by_call[call_id]
        results = self._results(step)
        result = next((r for r in results if r["source_call_id"] == call_id), None)
        if result is None:  # the call never returned (an interrupted episode)
            result = {"source_call_id": call_id}
            results.append(result)
        result["subagent_trajectory_ref"] = [{"trajectory_id": call_id}]

    def numbered(self) -> list[Step]:
        """The steps with ``step_id`` 1..n."""
        return [{"step_id": number, **step} for number, step in enumerate(self.steps, start=1)]

    @staticmethod
    def _results(step: Step) -> list[dict[str, Any]]:
        results: list[dict[str, Any]] = step.setdefault("observation", {"results": []})["results"]
        return results
