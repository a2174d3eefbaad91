"""How a Claude Code run ended, honestly: a provider or CLI failure is ``invalid``, never a result.

Example::

    result = agent_result(recorder, error=None, stderr=["..."], stopped=None)
    result.status, result.invalid     # ("completed", False), ("max_turns", False),
                                      # ("infra_error", True) for a 401 the CLI called "success"

| what happened | status | invalid |
|---|---|---|
| result ``success``, no API error | completed | no |
| result ``error_max_turns`` | max_turns | no |
| a budget stopped the run (coder_eval or the CLI's ``--max-budget-usd``) | budget_exceeded | no |
| an API error (auth, 429, 5xx, overloaded, lost connection), after the CLI's retries | infra_error | yes |
| the CLI is missing or could not start | infra_error | yes |
| the CLI exited without a result, or reported another error | agent_error | yes |
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from claude_agent_sdk import CLIConnectionError, CLINotFoundError, ResultMessage

from coder_eval.agents.base import AgentResult
from coder_eval.agents.claude_code.accounting import model_usage_total
from coder_eval.agents.claude_code.recorder import Recorder
from coder_eval.pricing import cost_usd
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
    status, invalid, message = _verdict(recorder, error, stderr, stopped)
    result.status, result.invalid, result.error = status, invalid, message
    return result


def total_usage(recorder: Recorder) -> Usage:
    """Token totals: the CLI's session-wide per-model usage (sub-agents included), else what streamed."""
    last = recorder.results[-1] if recorder.results else None
    reported = model_usage_total(last.model_usage) if last is not None else None
    return reported if reported is not None else recorder.usage


def total_cost(recorder: Recorder, usage: Usage) -> float | None:
    """The CLI's reported ``total_cost_usd`` (session-wide), else priced from ``usage``."""
    reported = [r.total_cost_usd for r in recorder.results if r.total_cost_usd is not None]
    if reported:
        return float(reported[-1])
    if usage.total == 0:
        return 0.0
    return cost_usd(recorder.model, usage)


def _api_seconds(results: Sequence[ResultMessage]) -> float | None:
    return max(r.duration_api_ms for r in results) / 1000 if results else None


def _verdict(
    recorder: Recorder, error: BaseException | None, stderr: Sequence[str], stopped: str | None
) -> tuple[Status, bool, str | None]:
    if stopped is not None:
        return "budget_exceeded", False, stopped
    failed = next((r for r in recorder.results if r.is_error or r.subtype != "success"), None)
    final = failed or (recorder.results[-1] if recorder.results else None)
    if final is None:
        return _no_result(error, stderr, recorder.api_errors)
    if final.subtype == "error_max_turns" or final.terminal_reason == "max_turns":
        return "max_turns", False, _describe(final)
    if final.subtype == "error_max_budget_usd":
        return "budget_exceeded", False, _describe(final)
    if _is_api_failure(final, recorder):
        status = f" (HTTP {final.api_error_status})" if final.api_error_status else ""
        return "infra_error", True, f"model API error{status}: {_describe(final)}"
    if final.is_error or final.subtype != "success":
        return "agent_error", True, f"Claude Code reported {final.subtype}: {_describe(final)}"
    return "completed", False, None


def _is_api_failure(result: ResultMessage, recorder: Recorder) -> bool:
    if result.terminal_reason == "api_error" or result.api_error_status is not None:
        return True
    if recorder.api_errors and result.is_error:
        return True
    return recorder.usage.output_tokens == 0 and bool(API_FAILURE_TEXT.search(result.result or ""))


def _no_result(
    error: BaseException | None, stderr: Sequence[str], api_errors: Sequence[str]
) -> tuple[Status, bool, str | None]:
    tail = " | ".join(line.strip() for line in stderr[-5:] if line.strip())
    detail = f"; stderr: {tail}" if tail else ""
    if isinstance(error, CLINotFoundError | CLIConnectionError):
        return "infra_error", True, f"cannot start Claude Code: {error}{detail}"
    if api_errors:
        return "infra_error", True, f"model API error: {api_errors[-1]}{detail}"
    cause = f"{type(error).__name__}: {error}" if error is not None else "the stream ended"
    return "agent_error", True, f"Claude Code exited without a result ({cause}){detail}"


def _describe(result: ResultMessage) -> str:
    return "; ".join(result.errors or []) or (result.result or "") or result.subtype
