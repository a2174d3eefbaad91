"""Token accounting of a Claude Code run: the message stream sums exactly to each turn's totals.

Two things the SDK's messages leave out, put back as trajectory events:

- **a sub-agent's final generation.** The CLI streams a sub-agent's intermediate messages but not
  the one that ends it: that text comes back as the ``Agent`` tool's result, and its usage only in
  the result's ``tool_use_result`` (``{"content": [...], "usage": {...}, "resolvedModel": ...}``).
  :func:`subagent_final` makes it the assistant message it was (``parent_tool_use_id``: the call).
- **the rest of each turn.** Sub-agent messages carry the usage known when they started (their final
  output count is never streamed), and the CLI's own auxiliary requests (titles, compaction) are no
  message at all. At each turn's result, :class:`TurnLedger` compares what the messages recorded
  with the CLI's totals for the turn (``model_usage``, cumulative over the session) and writes the
  difference as one ``system`` message, ``{"type": "usage_reconciliation", ...}``, whose ``usage`` is
  that difference. A total *below* what the messages carried is refused, never reconciled downward:
  that bucket's difference is 0 and the entry says what was refused (``refused``); the CLI's stream is
  the agent's own account, and a line written into it must not lower what was used.

Example::

    ledger = TurnLedger()
    ledger.record(message.usage)                      # every message the recorder writes
    entry = ledger.reconcile(result_message)          # a Message, or None when they already agree
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from coder_eval.trajectory import Message, Usage

RECONCILIATION = "usage_reconciliation"
"""The content type of a turn's reconciliation entry (a ``system`` message)."""


def model_usage_total(model_usage: Mapping[str, Any] | None) -> Usage | None:
    """The CLI's per-model usage (``{"claude-...": {"inputTokens": ...}}``) summed over models."""
    if not model_usage:
        return None
    total = Usage()
    for counts in model_usage.values():
        total = total + Usage(
            input_tokens=int(counts.get("inputTokens") or 0),
            output_tokens=int(counts.get("outputTokens") or 0),
            cache_read_tokens=int(counts.get("cacheReadInputTokens") or 0),
            cache_creation_tokens=int(counts.get("cacheCreationInputTokens") or 0),
        )
    return total


def subagent_final(result: Any, tool_use_id: str, usage: Usage | None) -> Message | None:
    """The final message of the sub-agent an ``Agent`` call ran, from its ``tool_use_result`` (None
    when the result is not a sub-agent's, or says nothing of its usage). ``usage``: the parsed
    ``result["usage"]``."""
    if not isinstance(result, dict) or usage is None or "agentId" not in result:
        return None
    blocks = [b for b in result.get("content") or [] if isinstance(b, dict) and b.get("type") == "text"]
    model = result.get("resolvedModel")
    return Message(
        role="assistant",
        content=blocks,
        model=str(model) if model else None,
        usage=usage,
        parent_tool_use_id=tool_use_id,
    )


def _minus(a: Usage, b: Usage) -> Usage:
    return Usage(
        input_tokens=a.input_tokens - b.input_tokens,
        output_tokens=a.output_tokens - b.output_tokens,
        cache_read_tokens=a.cache_read_tokens - b.cache_read_tokens,
        cache_creation_tokens=a.cache_creation_tokens - b.cache_creation_tokens,
    )


class TurnLedger:
    """What a turn's messages recorded, against what the CLI says the turn used."""

    def __init__(self) -> None:
        self.recorded = Usage()
        self.reported_before = Usage()
        self.turn = 0

    def record(self, usage: Usage | None) -> None:
        """Count a written message's usage towards the current turn."""
        if usage is not None:
            self.recorded = self.recorded + usage

    def reconcile(self, model_usage: Mapping[str, Any] | None) -> Message | None:
        """At a turn's result: the entry that makes the turn's messages sum to its totals (None when
        they already do, or the CLI reported no per-model usage); the next turn starts from zero."""
        self.turn += 1
        reported = model_usage_total(model_usage)
        if reported is None:
            self.recorded = Usage()
            return None
        turn_total = _minus(reported, self.reported_before)
        missing = _minus(turn_total, self.recorded)
        kept, refused = _split_signs(missing)
        self.reported_before = self.reported_before + self.recorded + kept  # what was accepted so far
        self.recorded = Usage()
        if kept == Usage() and refused == Usage():
            return None
        body: dict[str, Any] = {
            "type": RECONCILIATION,
            "turn": self.turn,
            "turn_total": turn_total.model_dump(),
            "note": "tokens of this turn no message carries: sub-agent output counts never streamed, "
            "the CLI's own auxiliary requests",
        }
        if refused != Usage():
            body["refused"] = refused.model_dump()
            body["note"] = "the CLI reported fewer tokens than this turn's messages carried: refused"
        return Message(role="system", content=[body], usage=kept)


def _split_signs(difference: Usage) -> tuple[Usage, Usage]:
    """(the positive buckets, the negative ones as positive counts) of ``difference``."""
    buckets = difference.model_dump()
    return (
        Usage(**{k: max(0, v) for k, v in buckets.items()}),
        Usage(**{k: max(0, -v) for k, v in buckets.items()}),
    )
