"""How a Claude Code run ended, honestly: what the CLI does to itself is the agent's failure.

Example::

    result = agent_result(recorder, error=None, stderr=["..."], stopped=None)
    result.status, result.invalid     # ("completed", False), ("max_turns", False),
                                      # ("agent_error", False) for a 401 the CLI called "success",
                                      # with result.provider_claim saying so

| what happened | status | invalid |
|---|---|---|
| result ``success``, no API error | completed | no |
| result ``error_max_turns`` | max_turns | no |
| a budget stopped the run (coder_eval or the CLI's ``--max-budget-usd``) | budget_exceeded | no |
| the CLI reported an API error (auth, 429, 5xx, lost connection) | agent_error (``provider_claim``) | no |
| the CLI is missing, or ended before it said anything | infra_error | yes (``harness``) |
| the CLI exited without a result, or reported another error | agent_error | no |

A claimed API error is checked against the endpoint's record. Only the harness's own evidence makes an
episode ``invalid``: a provider error counts when the
model endpoint served it (``coder_eval.episode.record``), never because the CLI's stream says so.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from claude_agent_sdk import CLIConnectionError, CLINotFoundError, ResultMessage

from coder_eval.agents.base import AgentResult
from coder_eval.agents.claude_code.accounting import model_usage_total
from coder_eval.agents.claude_code.recorder import Recorder
from coder_eval.pricing import cost_usd, rates_for
from coder_eval.trajectory import Status, Usage

API_FAILURE_TEXT = re.compile(
    r"invalid api key|api error|please run /login|authentication|credit balance|oauth token", re.IGNORECASE
)
"""Result text of a run that only reported a provider failure (checked when nothing was produced)."""


def agent_result(
    recorder: Recorder, error: BaseException | None, stderr: Sequence[str], stopped: str | None
) -> AgentResult:
    """The :class:`AgentResult` of a run from what was recorded, the SDK's exception and stderr.

    Example: ``agent_result(recorder, None, [], stopped="used 9000 tokens > max_total_tokens 5000")``
    -> ``AgentResult(status="budget_exceeded", error="used 9000 tokens ...")``.
    """
    usage = total_usage(recorder)
    result = AgentResult(
        usage=usage,
        cost_usd=total_cost(recorder, usage),
        num_turns=sum(r.num_turns for r in recorder.results) or recorder.turns,
        duration_api_s=_api_seconds(recorder.results),
        final_message=next((r.result for r in reversed(recorder.results) if r.result), None),
    )
    status, invalid, message, claim = _verdict(recorder, error, stderr, stopped)
    result.status, result.invalid, result.error = status, invalid, message
    result.cause, result.provider_claim = ("harness" if invalid else None), claim
    return result


def total_usage(recorder: Recorder) -> Usage:
    """Token totals: the CLI's session-wide per-model usage (sub-agents included), never below what its
    messages streamed (a total reported below them is refused, bucket by bucket), else what streamed."""
    last = recorder.results[-1] if recorder.results else None
    reported = model_usage_total(last.model_usage) if last is not None else None
    return at_least(reported, recorder.usage) if reported is not None else recorder.usage


def at_least(reported: Usage, floor: Usage) -> Usage:
    """``reported``, each bucket raised to ``floor``'s where it is below.

    Example: ``at_least(Usage(input_tokens=2), Usage(input_tokens=900))`` -> ``Usage(input_tokens=900)``.
    """
    return Usage(
        input_tokens=max(reported.input_tokens, floor.input_tokens),
        output_tokens=max(reported.output_tokens, floor.output_tokens),
        cache_read_tokens=max(reported.cache_read_tokens, floor.cache_read_tokens),
        cache_creation_tokens=max(reported.cache_creation_tokens, floor.cache_creation_tokens),
    )


def total_cost(recorder: Recorder, usage: Usage) -> float | None:
    """The CLI's reported ``total_cost_usd`` (session-wide), never below ``usage`` priced; else that price."""
    reported = [r.total_cost_usd for r in recorder.results if r.total_cost_usd is not None]
    if usage.total == 0 and not reported:
        return 0.0
    priced = (
        cost_usd(recorder.model, usage)
        if usage.total and recorder.model and rates_for(recorder.model)
        else None
    )
    if reported:
        return max(float(reported[-1]), priced or 0.0)
    return priced


def _api_seconds(results: Sequence[ResultMessage]) -> float | None:
    return max(r.duration_api_ms for r in results) / 1000 if results else None


def _verdict(
    recorder: Recorder, error: BaseException | None, stderr: Sequence[str], stopped: str | None
) -> tuple[Status, bool, str | None, str | None]:
    """(status, invalid, error, provider claim)."""
    if stopped is not None:
        return "budget_exceeded", False, stopped, None
    failed = next((r for r in recorder.results if r.is_error or r.subtype != "success"), None)
    final = failed or (recorder.results[-1] if recorder.results else None)
    if final is None:
        return _no_result(recorder, error, stderr)
    if final.subtype == "error_max_turns" or final.terminal_reason == "max_turns":
        return "max_turns", False, _describe(final), None
    if final.subtype == "error_max_budget_usd":
        return "budget_exceeded", False, _describe(final), None
    if _is_api_failure(final, recorder):
        status = f" (HTTP {final.api_error_status})" if final.api_error_status else ""
        claim = f"model API error{status}: {_describe(final)}"
        return "agent_error", False, f"Claude Code reported a {claim}", claim
    if final.is_error or final.subtype != "success":
        return "agent_error", False, f"Claude Code reported {final.subtype}: {_describe(final)}", None
    if error is not None:  # a result that says success, from a CLI that then died: not a finished run
        return "agent_error", False, f"Claude Code ended abnormally after its result ({error})", None
    return "completed", False, None, None


def _is_api_failure(result: ResultMessage, recorder: Recorder) -> bool:
    if result.terminal_reason == "api_error" or result.api_error_status is not None:
        return True
    if recorder.api_errors and result.is_error:
        return True
    return recorder.usage.output_tokens == 0 and bool(API_FAILURE_TEXT.search(result.result or ""))


def _no_result(
    recorder: Recorder, error: BaseException | None, stderr: Sequence[str]
) -> tuple[Status, bool, str | None, str | None]:
    tail = " | ".join(line.strip() for line in stderr[-5:] if line.strip())
    detail = f"; stderr: {tail}" if tail else ""
    silent = recorder.version is None and not recorder.turns  # no init message, no model turn: never ran
    if isinstance(error, CLINotFoundError) or (isinstance(error, CLIConnectionError) and silent):
        return "infra_error", True, f"cannot start Claude Code: {error}{detail}", None
    claim = f"model API error: {recorder.api_errors[-1]}" if recorder.api_errors else None
    cause = f"{type(error).__name__}: {error}" if error is not None else "the stream ended"
    said = f"; it reported a {claim}" if claim else ""
    return "agent_error", False, f"Claude Code exited without a result ({cause}){said}{detail}", claim


def _describe(result: ResultMessage) -> str:
    return "; ".join(result.errors or []) or (result.result or "") or result.subtype
