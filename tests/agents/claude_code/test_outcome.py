from __future__ import annotations

from typing import Any

import pytest
from claude_agent_sdk import (
    AssistantMessage,
    CLINotFoundError,
    ResultMessage,
    StreamEvent,
    SystemMessage,
    TextBlock,
)

from coder_eval.agents.claude_code.outcome import agent_result
from coder_eval.agents.claude_code.recorder import Recorder

MODEL_USAGE = {"claude-sonnet-4-5": {"inputTokens": 3, "outputTokens": 40, "cacheReadInputTokens": 9}}


def result(subtype: str = "success", is_error: bool = False, **fields: Any) -> ResultMessage:
    return ResultMessage(subtype, 100, 50, is_error, 2, "s", **fields)


def recorded(*messages: Any) -> Recorder:
    recorder = Recorder(sink=type("Sink", (), {"write": lambda self, event: None})())
    for message in messages:
        recorder.handle(message)
    return recorder


def test_success_takes_usage_and_cost_from_the_cli() -> None:
    end = agent_result(
        recorded(result(total_cost_usd=0.5, model_usage=MODEL_USAGE, result="ok")), None, [], None
    )
    assert (end.status, end.invalid, end.cost_usd, end.final_message) == ("completed", False, 0.5, "ok")
    assert (end.usage.output_tokens, end.usage.cache_read_tokens, end.num_turns) == (40, 9, 2)
    assert end.duration_api_s == 0.05


@pytest.mark.parametrize(
    "final",
    [
        result(is_error=True, api_error_status=401, terminal_reason="api_error", result="Invalid API key"),
        result(result="Invalid API key · Please run /login"),
        result(is_error=True, result="API Error: Connection to the API was lost"),
    ],
)
def test_a_reported_provider_failure_is_a_claim_not_invalid(final: ResultMessage) -> None:
    end = agent_result(recorded(final), None, [], None)
    assert (end.status, end.invalid) == ("agent_error", False)  # the episode checks it at the endpoint
    assert end.provider_claim is not None and "model API error" in end.provider_claim


def test_synthetic_error_message_marks_an_error_result_as_a_provider_claim() -> None:
    error = AssistantMessage(content=[TextBlock("API Error: 500")], model="<synthetic>", error="server_error")
    end = agent_result(recorded(error, result(is_error=True, result="x")), None, [], None)
    assert (end.status, end.invalid, end.provider_claim is not None) == ("agent_error", False, True)


def test_a_success_result_from_a_cli_that_then_died_is_not_completed() -> None:
    end = agent_result(recorded(result(result="All done.")), RuntimeError("exit code -9"), [], None)
    assert (end.status, end.invalid) == ("agent_error", False)


def test_a_reported_total_below_the_streamed_messages_is_refused() -> None:
    low = {"claude-sonnet-4-5": {"inputTokens": 1, "outputTokens": 1}}
    start = StreamEvent(
        "u", "s", {"type": "message_start", "message": {"usage": {"input_tokens": 900}}}, None
    )
    stop = StreamEvent("u2", "s", {"type": "message_stop"}, None)
    reply = AssistantMessage(content=[TextBlock("hi")], model="claude-sonnet-4-5", message_id="m1")
    init = SystemMessage("init", {"model": "claude-sonnet-4-5"})
    final = result(model_usage=low, total_cost_usd=0.0)
    end = agent_result(recorded(init, start, reply, stop, final), None, [], None)
    assert end.usage.input_tokens == 900
    assert end.cost_usd is not None and end.cost_usd > 0


def test_max_turns_is_a_status_not_an_invalid_run() -> None:
    final = result("error_max_turns", True, errors=["Reached maximum number of turns (2)"])
    end = agent_result(recorded(final), None, [], None)
    assert (end.status, end.invalid, end.error) == ("max_turns", False, "Reached maximum number of turns (2)")


def test_no_result_is_the_agents_crash_with_stderr() -> None:
    end = agent_result(recorded(), RuntimeError("exit code 3"), ["boom"], None)
    assert (end.status, end.invalid) == ("agent_error", False)
    assert end.error is not None and "exit code 3" in end.error and "boom" in end.error


def test_missing_cli_is_infra() -> None:
    end = agent_result(recorded(), CLINotFoundError("nope"), [], None)
    assert (end.status, end.invalid) == ("infra_error", True)


def test_budget_stop_wins() -> None:
    end = agent_result(recorded(result()), None, [], "used 9 tokens > max_total_tokens 5")
    assert (end.status, end.invalid, end.error) == (
        "budget_exceeded",
        False,
        "used 9 tokens > max_total_tokens 5",
    )
