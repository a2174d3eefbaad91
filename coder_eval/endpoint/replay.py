"""A recorded episode's endpoint record as a script for the scripted server: record once, replay forever.

Example::

    script = script_of(read_trajectory(path).events)    # a dict that load_script() reads
    script["turns"][0]    # {"blocks": [{"text": "Let me look."}, {"tool_use": {"name": "Bash", ...}}]}

Each step of the main conversation (its ``position`` at the endpoint) becomes one turn: the answer
the model gave there, text and tool calls in order. Faults the endpoint served at a step before it
answered become an ``error`` with ``times`` (the CLI met them again, and retried them again). Tool
calls are written in the canonical vocabulary with the recorded workspace's path made relative, so
the scripted server gives them to the replaying CLI in its own form and in its own workspace; a
freeform input (Codex's patches) is kept in the recorded CLI's form. Sub-agents' steps become
``subagent_turns`` (the first sub-agent's: every sub-agent of a replay gets them), and the last
auxiliary answer the ``auxiliary_text``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from coder_eval.agents.tools import canonical_input, canonical_name
from coder_eval.endpoint.check import model_calls
from coder_eval.trajectory import Event, ModelCall, PhaseEvent

ERROR_KINDS = {401: "auth", 403: "auth", 429: "rate_limit", 503: "overloaded", 529: "overloaded"}
"""HTTP status of a served fault -> the script's error kind (other 5xx: ``server``)."""


def script_of(events: Sequence[Event]) -> dict[str, Any]:
    """The script that answers the episode's requests as the endpoint answered them (see the module)."""
    calls = model_calls(events)
    workdir = _workdir(events)
    main = [c for c in calls if c.kind == "main"]
    sub = [c for c in calls if c.kind == "subagent"]
    first_sub = _first_conversation(sub)
    auxiliary = [c for c in calls if c.kind == "auxiliary" and c.status == 200]
    models = [c.model for c in main if c.model]
    script: dict[str, Any] = {"turns": turns_of(main, workdir), "final_text": "Done."}
    if first_sub:
        script["subagent_turns"] = turns_of(first_sub, workdir)
    if auxiliary:
        script["auxiliary_text"] = _text(auxiliary[-1]) or "OK"
    if models:
        script["model"] = models[0]
    return script


def turns_of(calls: Sequence[ModelCall], workdir: str | None) -> list[dict[str, Any]]:
    """One turn per step of a conversation, in order of its position."""
    steps: dict[int, list[ModelCall]] = {}
    for call in calls:
        steps.setdefault(call.position or 0, []).append(call)
    turns = []
    for position in sorted(steps):
        attempts = steps[position]
        answer = next((c for c in attempts if c.status == 200), None)
        faults = [c for c in attempts if c.status != 200 and (answer is None or c.seq < answer.seq)]
        turn: dict[str, Any] = {}
        if answer is not None:
            turn["blocks"] = [_block(b, workdir) for b in answer.content] or [{"text": ""}]
        if faults:
            turn["error"] = {"kind": _kind(faults[-1]), "times": len(faults) if answer is not None else None}
        turns.append(turn)
    return turns


def _kind(call: ModelCall) -> str:
    if call.status is None:
        return "cut_stream"
    return ERROR_KINDS.get(call.status, "server")


def _block(block: dict[str, Any], workdir: str | None) -> dict[str, Any]:
    if block.get("type") == "text":
        return {"text": str(block.get("text", ""))}
    name, tool_input = str(block.get("name", "")), block.get("input")
    if isinstance(tool_input, str):
        return {"tool_use": {"name": name, "input": _relative(tool_input, workdir)}}
    given = tool_input if isinstance(tool_input, dict) else {}
    canonical = canonical_input(name, given)
    return {"tool_use": {"name": canonical_name(name), "input": _relative(canonical, workdir)}}


def _relative(value: Any, workdir: str | None) -> Any:
    """``value`` with the recorded workspace's absolute path made relative (strings, lists, dicts)."""
    if workdir is None:
        return value
    if isinstance(value, str):
        return value.replace(workdir.rstrip("/") + "/", "").replace(workdir.rstrip("/"), ".")
    if isinstance(value, list):
        return [_relative(v, workdir) for v in value]
    if isinstance(value, dict):
        return {k: _relative(v, workdir) for k, v in value.items()}
    return value


def _workdir(events: Sequence[Event]) -> str | None:
    for event in events:
        if isinstance(event, PhaseEvent) and event.name == "agent":
            workdir = event.details.get("workdir")
            return str(workdir) if workdir else None
    return None


def _first_conversation(calls: Sequence[ModelCall]) -> list[ModelCall]:
    """The requests of the first sub-agent: from its first step up to the next step 0."""
    out: list[ModelCall] = []
    for call in calls:
        if out and (call.position or 0) == 0 and any(c.status == 200 for c in out):
            break
        out.append(call)
    return out


def _text(call: ModelCall) -> str:
    return "".join(str(b.get("text", "")) for b in call.content if b.get("type") == "text")
