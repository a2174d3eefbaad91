"""What the endpoint's record says about a run that ended early: did the model fail, or was it fine?

Example::

    provider_fault(calls)   # "HTTP 529 overloaded_error on the last request" or None
    answered(calls)         # True once the model answered a request of the conversation

Only the harness's record counts: an agent CLI that says "API error 529" when the endpoint answered
200 has failed on its own. The last request of the conversation decides (a CLI retries passing faults
itself, so an earlier fault it got past says nothing); requests that are not the conversation's
(a connectivity check, a model listing) are not looked at.
"""

from __future__ import annotations

from collections.abc import Sequence

from coder_eval.trajectory import ModelCall

CONVERSATION = ("main", "subagent")
"""Request kinds that carry the agent's conversation."""


def conversation(calls: Sequence[ModelCall]) -> list[ModelCall]:
    """The requests of the conversation, in order."""
    return [c for c in sorted(calls, key=lambda c: c.seq) if c.kind in CONVERSATION]


def answered(calls: Sequence[ModelCall]) -> bool:
    """The model answered at least one request of the conversation."""
    return any(c.status == 200 for c in conversation(calls))


def provider_fault(calls: Sequence[ModelCall]) -> str | None:
    """The fault on the conversation's last request, as served (None when it was answered, or none came).

    Example: a last request answered 529 -> ``"the model endpoint answered HTTP 529 (overloaded)"``.
    """
    asked = conversation(calls)
    if not asked:
        return None
    last = asked[-1]
    if last.status == 200 and last.error is None:
        return None
    if last.status is None:
        return f"the model endpoint gave no answer ({last.error or 'connection failed'})"
    return f"the model endpoint answered HTTP {last.status}" + (f" ({last.error})" if last.error else "")
