"""The agent CLI's own account of an episode, checked against the model endpoint's record.

Example::

    checked = check_record(events, source="scripted", confined=True)
    checked.record.unverified        # ["tool_call toolu_x Bash: pytest -q (the model never asked for it)"]
    checked.usage, checked.cost_usd  # as served
    grading_events = verified_view(events, source="scripted")   # what criteria read

A tool call in the CLI's stream is verified when the model asked for it: an answer at the endpoint
holds a tool_use with its id (or, for CLIs that number calls their own way, the next one with the
same tool and input). Its result is verified when its call is, and the endpoint received exactly one
text for that call which holds the stream's text, with the same error flag. An assistant message is
verified when each of its texts is in one of the model's answers and each of its calls is verified.
What is not verified stays in the trajectory and never reaches a criterion. Where the harness has no
vantage point (``source="agent"``) nothing can be checked, and the record says so.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from coder_eval.agents.tools import canonical_input, canonical_name
from coder_eval.trajectory import (
    Event,
    Message,
    ModelCall,
    RecordCheck,
    RecordSource,
    ToolCall,
    ToolResult,
    ToolReturn,
    Usage,
)

LISTED = 50
"""Unverified events described in the record (all are counted)."""
COMPARED_CHARS = 15_000
"""Characters of a result compared (both sides are cut at 20,000, one may carry a header)."""
EXIT_CODE = re.compile(r"(?:exit(?:ed)?(?: with)? code:?|Exit code:)\s*(-?\d+)", re.IGNORECASE)


@dataclass(frozen=True)
class Checked:
    """The record check, and what the episode is counted from."""

    record: RecordCheck
    usage: Usage | None
    cost_usd: float | None
    final_text: str | None
    """The model's last answer in the main conversation (graded when the CLI's claim is unverified)."""
    unverified: frozenset[int]
    """Indexes (in ``events``) of the stream's events that have no counterpart."""


def model_calls(events: Sequence[Event]) -> list[ModelCall]:
    """The endpoint's record, in request order."""
    return sorted((e for e in events if isinstance(e, ModelCall)), key=lambda c: c.seq)


def check_record(events: Sequence[Event], source: RecordSource, confined: bool) -> Checked:
    """Check every tool call, result and assistant message of the stream (see the module docstring)."""
    calls = model_calls(events)
    if source == "agent":
        note = (
            "no harness vantage point on the model endpoint: tool calls, usage and cost are the agent's own"
        )
        record = RecordCheck(source="agent", confined=confined, notes=[note])
        return Checked(record, None, None, None, frozenset())
    matcher = _Matcher(calls)
    bad = matcher.run(events)
    listed = [why for _, why in bad]
    record = RecordCheck(
        source=source,
        confined=confined,
        model_calls=len(calls),
        tool_calls=matcher.stream_calls,
        unverified_count=len(bad),
        unverified=listed[:LISTED],
        unverified_ids=sorted(matcher.unverified_ids),
    )
    usage, cost = served_totals(calls)
    return Checked(record, usage, cost, last_answer(calls), frozenset(i for i, _ in bad))


def verified_view(events: Sequence[Event], source: RecordSource | None) -> list[Event]:
    """``events`` without the stream's unverified ones (all of them when there is no record to check)."""
    if source is None or source == "agent":
        return list(events)
    unverified = check_record(events, source, confined=True).unverified
    return [e for i, e in enumerate(events) if i not in unverified]


def served_totals(calls: Sequence[ModelCall]) -> tuple[Usage, float | None]:
    """Usage and cost of every answer served; the cost is None when a model that answered has no price."""
    usage, cost = Usage(), 0.0
    priced = True
    for call in calls:
        if call.usage is None:
            continue
        usage = usage + call.usage
        if call.cost_usd is None and call.usage.total:
            priced = False
        cost += call.cost_usd or 0.0
    return usage, (cost if priced else None)


def last_answer(calls: Sequence[ModelCall]) -> str | None:
    """The text of the model's last answer in the main conversation that has any."""
    for call in reversed(calls):
        if call.kind == "main" and call.status == 200:
            text = "".join(b.get("text", "") for b in call.content if b.get("type") == "text")
            if text.strip():
                return text
    return None


def _norm(text: str) -> str:
    return " ".join(text.split())


class _Matcher:
    """Pairs the stream's calls, results and messages with the endpoint's record."""

    def __init__(self, calls: Sequence[ModelCall]) -> None:
        answers = [c for c in calls if c.status == 200]
        self.served = [b for c in answers for b in c.content if b.get("type") == "tool_use"]
        self.texts = [
            _norm(" ".join(str(b.get("text", "")) for b in c.content if b.get("type") == "text"))
            for c in answers
        ]
        self.returns = [r for c in calls for r in c.tool_results]
        self.by_id = {str(b["id"]): i for i, b in enumerate(self.served) if b.get("id") is not None}
        self.used: set[int] = set()
        self.matched: dict[str, int] = {}
        self.unverified_ids: set[str] = set()
        self.stream_calls = 0
        self.ids_shared = False

    def run(self, events: Sequence[Event]) -> list[tuple[int, str]]:
        bad: list[tuple[int, str]] = []
        stream = [(i, e) for i, e in enumerate(events) if not isinstance(e, ModelCall)]
        calls = list(_stream_calls(stream))
        self.ids_shared = any(call.id in self.by_id for _, call in calls)
        refused: dict[str, str] = {}
        for _, call in calls:
            self.stream_calls += 1
            why = self._call(call)
            if why:
                self.unverified_ids.add(call.id)
                refused[call.id] = f"tool_call {call.id} {call.name}: {why}"
        for index, event in stream:
            why = refused.get(event.id) if isinstance(event, ToolCall) else self._event(event)
            if why:
                bad.append((index, why))
        return bad

    def _call(self, call: ToolCall) -> str | None:
        """Why ``call`` is unverified, or None (it is then matched to a served tool use)."""
        slot = self.by_id.get(call.id)
        if slot is not None:
            if slot in self.used:
                return "a second call under an id the model used once"
            served = self.served[slot]
            if not same_call(served["name"], served.get("input"), call.name, call.input):
                return "the model asked for another call under this id"
        elif self.ids_shared:
            return "the model never asked for it"
        else:  # a CLI that numbers calls its own way: the next unclaimed call of the same tool and input
            slot = next(
                (
                    i
                    for i, b in enumerate(self.served)
                    if i not in self.used and same_call(b["name"], b.get("input"), call.name, call.input)
                ),
                None,
            )
            if slot is None:
                return "the model never asked for it"
        self.used.add(slot)
        self.matched[call.id] = slot
        return None

    def _event(self, event: Event) -> str | None:
        if isinstance(event, ToolResult):
            why = self._result(event.id, event.output, event.is_error, event.exit_code)
            if why:
                self.unverified_ids.add(event.id)
                return f"tool_result {event.id}: {why}"
            return None
        if isinstance(event, Message) and event.role == "assistant":
            return self._assistant(event)
        if isinstance(event, Message) and event.role == "user":
            return self._user(event)
        return None

    def _result(self, call_id: str, output: str, is_error: bool, exit_code: int | None = None) -> str | None:
        slot = self.matched.get(call_id)
        if slot is None:
            return "its call is unverified"
        returns = self._returns_for(slot)
        texts = {r.output for r in returns}
        if not returns:
            return "the model was never shown a result for this call"
        if len(texts) > 1:
            return "the endpoint received different results for this call"
        shown = returns[0]
        edits = canonical_name(self.served[slot]["name"]) in ("Edit", "Write")
        if _norm(output[:COMPARED_CHARS]) not in _norm(shown.output) and not (
            edits and _changes_named(output, shown.output)
        ):
            return "the model was shown another result"
        if shown.is_error is not None and shown.is_error != is_error:
            return f"the model was shown is_error {shown.is_error}"
        code = EXIT_CODE.search(shown.output)
        if exit_code is not None and code is not None and int(code.group(1)) != exit_code:
            return f"the model was shown exit code {code.group(1)}"
        return None

    def _returns_for(self, slot: int) -> list[ToolReturn]:
        served = self.served[slot]
        ident = served.get("id")
        if ident is not None:
            return [r for r in self.returns if r.id == ident]
        name = served["name"]  # the model's calls carry no ids: the n-th call of a tool, its n-th result
        nth = sum(1 for b in self.served[:slot] if b.get("id") is None and b["name"] == name)
        named = [r for r in self.returns if r.id not in self.by_id and (r.name or name) == name]
        return named[nth : nth + 1]

    def _assistant(self, message: Message) -> str | None:
        for block in message.content:
            kind = block.get("type")
            if kind == "text" and _norm(str(block.get("text", ""))):
                text = _norm(str(block.get("text", "")))
                if not any(text in served for served in self.texts):
                    return f"message: text the model never wrote ({text[:80]!r})"
            elif kind == "tool_use" and str(block.get("id")) not in self.matched:
                return f"message: a tool_use the model never asked for ({block.get('name')})"
        return None

    def _user(self, message: Message) -> str | None:
        for block in message.content:
            if block.get("type") != "tool_result":
                continue
            ident = str(block.get("tool_use_id"))
            text = _block_text(block.get("content"))
            why = self._result(ident, text, bool(block.get("is_error")))
            if why:
                self.unverified_ids.add(ident)
                return f"message: tool_result {ident}: {why}"
        return None


def _stream_calls(stream: Sequence[tuple[int, Event]]) -> Iterator[tuple[int, ToolCall]]:
    """Every tool call of the stream, once per id: ``tool_call`` events and the ``tool_use`` blocks of
    assistant messages (as graders read them: ``criteria/transcript.py``)."""
    seen: set[str] = set()
    for index, event in stream:
        found: list[ToolCall] = []
        if isinstance(event, ToolCall):
            found = [event]
        elif isinstance(event, Message) and event.role == "assistant":
            found = [
                ToolCall(id=str(b["id"]), name=str(b.get("name", "")), input=_dict(b.get("input")))
                for b in event.content
                if b.get("type") == "tool_use" and b.get("id") is not None
            ]
        for call in found:
            if call.id not in seen:
                seen.add(call.id)
                yield index, call


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _block_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(b.get("text", "")) if b.get("type") == "text" else f"[{b.get('type')}]"
            for b in content
            if isinstance(b, dict)
        )
    return ""


def same_call(served_name: str, served_input: Any, name: str, tool_input: dict[str, Any]) -> bool:
    """The stream's call ``name(tool_input)`` is the served one, in any CLI's vocabulary: the same
    canonical tool, and the same input (a shell command compared as the shell reads it; a freeform
    patch against the files a CLI says it changed).

    Example: ``same_call("exec_command", {"cmd": "ls"}, "exec_command", {"cmd": "ls"})`` -> True.
    """
    if canonical_name(served_name) != canonical_name(name):
        return False
    mine = canonical_input(name, tool_input)
    if isinstance(served_input, str):
        return _patch_covers(served_input, mine)
    theirs = canonical_input(served_name, served_input) if isinstance(served_input, dict) else {}
    if theirs == mine or _with_defaults(theirs, mine):
        return True
    command, asked = mine.get("command"), theirs.get("command")
    if isinstance(command, str) and isinstance(asked, str):
        return _norm(command) == _norm(asked)
    patch = theirs.get("input")
    return isinstance(patch, str) and _patch_covers(patch, mine)


def _changes_named(output: str, shown: str) -> bool:
    """A CLI's own summary of the files a patch changed (``update /w/calc.py`` a line, Codex's), each
    file named in what the model was shown."""
    lines = [line.split(maxsplit=1) for line in output.splitlines() if line.strip()]
    paths = [parts[1] for parts in lines if len(parts) == 2]
    return bool(paths) and len(paths) == len(lines) and all(p.rsplit("/", 1)[-1] in shown for p in paths)


def _with_defaults(served: dict[str, Any], mine: dict[str, Any]) -> bool:
    """``mine`` is ``served`` with options a CLI fills in at their off value (``replace_all: false``)."""
    extra = mine.keys() - served.keys()
    return (
        bool(extra)
        and all(mine.get(k) == v for k, v in served.items())
        and all(mine[k] in (None, False) for k in extra)
    )


def _patch_covers(patch: str, tool_input: dict[str, Any]) -> bool:
    """Every file a CLI reports changing is named in the served patch."""
    changes = tool_input.get("changes")
    if not isinstance(changes, list) or not changes:
        return False
    paths = [str(c.get("path", "")) for c in changes if isinstance(c, dict)]
    return bool(paths) and all(p and (p in patch or p.rsplit("/", 1)[-1] in patch) for p in paths)
