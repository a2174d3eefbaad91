"""The episode's record, from the harness's vantage point: written at ``stop``, and what the agent's
run counts as read from it.

Example::

    settled = settle_on_record(task, stage.vantage, confined, sink, result)   # every agent process dead
    settled.result.status, settled.result.invalid   # ("agent_error", False) for a CLI that killed itself
    settled.record.unverified                       # events of the CLI's stream the endpoint never saw
    verify(..., events=settled.grading_events, final_message=settled.result.final_message)

Steps, once the agent's processes are dead: the endpoint's record of this attempt (the scripted
server's, or the API proxy's) is written to the trajectory as ``model_call`` events; the agent's end
is settled on it (an episode is ``invalid`` only on the harness's evidence: the endpoint served a
fault on the conversation's last request, or the CLI ended before its model answered once); the CLI's
stream is checked against it (``coder_eval.endpoint.check``); usage, cost, turns and, when the CLI's
claim has no counterpart, the final message are taken from it; budgets are applied to what was served.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from coder_eval.agents import AgentResult
from coder_eval.endpoint.check import check_record
from coder_eval.endpoint.evidence import answered, conversation, provider_fault
from coder_eval.task import TaskSpec
from coder_eval.trajectory import (
    Event,
    Message,
    ModelCall,
    RecordCheck,
    RecordSource,
    TrajectoryWriter,
    Usage,
)


@dataclass(frozen=True)
class Vantage:
    """The harness's point on the model endpoint for one attempt: which one, and its record so far."""

    source: RecordSource
    calls: Callable[[], list[ModelCall]]


@dataclass(frozen=True)
class Settled:
    """The agent's result as the record has it, the record check, and what graders read."""

    result: AgentResult
    record: RecordCheck | None
    """None for an agent that talks to no model (``command``, ``oracle``, ``none``): nothing to check."""
    grading_events: list[Event]


def settle_on_record(
    task: TaskSpec, vantage: Vantage | None, confined: bool, sink: TrajectoryWriter, result: AgentResult
) -> Settled:
    """The steps in the module docstring; ``sink`` gets the ``model_call`` events."""
    calls = vantage.calls() if vantage is not None else None
    for call in calls or []:
        sink.write(call)
    talks = task.agent.CAPABILITIES.talks_to_model
    result = settle(result, calls, sink.events, talks)
    source: RecordSource = vantage.source if vantage is not None and talks else "agent"
    checked = check_record(sink.events, source, confined)
    record = checked.record.model_copy(
        update={"reported_usage": result.usage, "reported_cost_usd": result.cost_usd}
    )
    if source != "agent" and checked.usage is not None:
        record.notes += _account(result, checked.usage, checked.cost_usd, calls or [])
        if result.final_message and not _said(result.final_message, calls or []):
            record.notes.append(
                "the CLI's final message is not the model's: the model's last answer is graded"
            )
            result.final_message = checked.final_text
    events = [e for i, e in enumerate(sink.events) if i not in checked.unverified]
    return Settled(result, record if talks else None, events)


FAULT_STATUS = frozenset({401, 403, 408, 429})
"""HTTP statuses below 500 that are the provider's fault (a 400 or 404 is the request's)."""


def settle(
    result: AgentResult, calls: Sequence[ModelCall] | None, stream: Sequence[Event], talks_to_model: bool
) -> AgentResult:
    """An ``agent_error`` weighed against the harness's evidence (see the module docstring); any other
    end is returned as it is."""
    if result.invalid or result.status != "agent_error":
        return result
    if calls is not None and (fault := _fault(calls)) is not None:
        result.status, result.invalid, result.cause = "infra_error", True, "provider"
        result.error = f"{fault}; {result.error}" if result.error else fault
        return result
    before = not answered(calls) if calls is not None else not _assistant_spoke(stream)
    if talks_to_model and before:  # nothing the agent did could have ended it yet
        result.status, result.invalid, result.cause = "infra_error", True, "harness"
        result.error = f"the agent's CLI ended before its model answered once: {result.error}"
        return result
    if result.provider_claim:
        seen = (
            "the model endpoint served no such error"
            if calls is not None
            else "no harness vantage point saw it"
        )
        result.error = f"{result.error} ({seen}: the agent's own failure)"
    return result


def _fault(calls: Sequence[ModelCall]) -> str | None:
    asked = conversation(calls)
    status = asked[-1].status if asked else 200
    if status is not None and status < 500 and status not in FAULT_STATUS:
        return None
    return provider_fault(calls)


def _assistant_spoke(stream: Sequence[Event]) -> bool:
    return any(isinstance(e, Message) and e.role == "assistant" and e.model != "<synthetic>" for e in stream)


def _account(result: AgentResult, usage: Usage, cost: float | None, calls: Sequence[ModelCall]) -> list[str]:
    """Usage, cost and turns as served; a note when the CLI reported otherwise."""
    notes = []
    reported = result.usage
    if reported.total != usage.total:
        how = "less than was served: refused" if reported.total < usage.total else "more than was served"
        notes.append(f"the CLI reported {reported.total} tokens, {how}; the {usage.total} served are counted")
    result.usage, result.cost_usd = usage, cost
    result.num_turns = sum(1 for c in calls if c.kind == "main" and c.status == 200)
    return notes


def _said(text: str, calls: Sequence[ModelCall]) -> bool:
    wanted = " ".join(text.split())
    for call in calls:
        said = " ".join(
            " ".join(str(b.get("text", "")) for b in call.content if b.get("type") == "text").split()
        )
        if wanted and wanted in said:
            return True
    return False


def unpriced(task: TaskSpec, notes: list[str], result: AgentResult) -> AgentResult:
    """A scripted model has no price: its episode costs $0, though its served tokens are priced at the
    list price of the model name the script answers as. The note keeps that figure, so the tokens
    can still be priced as if a real model had spent them.

    Example: a scripted episode whose served tokens list at $0.1312 -> ``cost_usd == 0.0`` and the
    note ``"scripted model: no price, so the episode costs $0 (its tokens at list price: $0.1312)"``.
    """
    if task.agent.model != "scripted" or result.cost_usd is None or result.cost_usd == 0:
        return result
    notes.append(
        "scripted model: no price, so the episode costs $0 "
        f"(its tokens at list price: ${result.cost_usd:.4f})"
    )
    result.cost_usd = 0.0
    return result
