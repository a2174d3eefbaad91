"""An agent's end settled on the endpoint's record: ``invalid`` only on the harness's own evidence."""

from __future__ import annotations

from pathlib import Path

import pytest

from coder_eval.agents import AgentResult
from coder_eval.episode.record import Vantage, settle, settle_on_record
from coder_eval.task import load_tasks
from coder_eval.trajectory import Message, TrajectoryWriter, Usage
from tests.endpoint.builders import answer, called, returned, said, shown, text, use
from tests.helpers import minimal_task

CLAIM = "model API error (HTTP 529): Overloaded"


def died(claim: str | None = None) -> AgentResult:
    return AgentResult(status="agent_error", error="the CLI exited 137", provider_claim=claim)


def test_a_provider_error_the_endpoint_never_served_is_the_agents_fail() -> None:
    result = settle(died(CLAIM), [answer(0, text("hi"))], [], talks_to_model=True)
    assert (result.status, result.invalid, result.cause) == ("agent_error", False, None)
    assert "the model endpoint served no such error" in (result.error or "")


@pytest.mark.parametrize("status", [529, 500, 429, 401, None])
def test_a_fault_the_endpoint_served_last_makes_it_the_providers(status: int | None) -> None:
    calls = [answer(0, text("hi")), answer(1, status=status, position=1)]
    result = settle(died(), calls, [], talks_to_model=True)
    assert (result.status, result.invalid, result.cause) == ("infra_error", True, "provider")


def test_a_bad_request_is_not_the_providers_fault() -> None:
    calls = [answer(0, text("hi")), answer(1, status=400, position=1)]
    assert not settle(died(), calls, [], talks_to_model=True).invalid


def test_a_cli_that_ended_before_its_model_answered_once_is_the_harnesss() -> None:
    result = settle(died(), [], [], talks_to_model=True)
    assert (result.invalid, result.cause) == (True, "harness")


def test_an_agent_that_talks_to_no_model_fails_however_early_it_dies() -> None:
    assert not settle(died(), [], [], talks_to_model=False).invalid
    assert not settle(died(), None, [], talks_to_model=False).invalid


def test_without_a_vantage_point_a_claim_counts_for_nothing() -> None:
    stream = [Message(role="assistant", content=[{"type": "text", "text": "hi"}], model="m")]
    result = settle(died(CLAIM), None, stream, talks_to_model=True)
    assert (result.invalid, "no harness vantage point" in (result.error or "")) == (False, True)


def test_other_ends_are_left_as_they_are() -> None:
    done = AgentResult(status="timeout", error="task_timeout")
    assert settle(done, [answer(0, status=529)], [], talks_to_model=True) is done


def test_usage_cost_turns_and_the_final_message_come_from_the_record(tmp_path: Path) -> None:
    (task,) = load_tasks([minimal_task(tmp_path, extra="agent: {kind: claude-code, model: scripted}\n")])
    calls = [
        answer(0, use("t1", "Bash", command="pytest"), usage=Usage(input_tokens=40_000, output_tokens=4_000)),
        answer(1, text("1 test fails."), results=(shown("t1", "1 failed"),)),
    ]
    stream = [
        said(use("t1", "Bash", command="pytest")),
        called("t1", "Bash", command="pytest"),
        returned("t1", "1 failed"),
    ]
    forged_end = AgentResult(
        usage=Usage(input_tokens=1, output_tokens=1), cost_usd=0.0, final_message="All pass."
    )
    with TrajectoryWriter(tmp_path / "e.jsonl") as sink:
        for event in stream:
            sink.write(event)
        settled = settle_on_record(task, Vantage("scripted", lambda: calls), True, sink, forged_end)
    result = settled.result
    assert result.usage.total == 44_110 and result.cost_usd is not None and result.cost_usd > 0.1
    assert (result.num_turns, result.final_message) == (2, "1 test fails.")
    assert settled.record.reported_usage == Usage(input_tokens=1, output_tokens=1)
    assert any("less than was served: refused" in note for note in settled.record.notes)
    assert len([e for e in sink.events if e.type == "model_call"]) == 2
