"""Run limits every agent shares, kept by the watch on the events the agent writes."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from coder_eval import agents
from coder_eval.agents.base import AgentRequest, AgentResult, EventSink
from coder_eval.agents.spec import AgentSpecBase
from coder_eval.episode.plan import EpisodePlan
from coder_eval.episode.runner import run_episode
from coder_eval.episode.watch import Watch
from coder_eval.task import load_tasks
from coder_eval.task.limits import RunLimits
from coder_eval.trajectory import EpisodeEnd, Message, ToolCall, ToolResult, TrajectoryWriter, Usage
from tests.helpers import minimal_task


class BusySpec(AgentSpecBase):
    type: str = "busy"


class BusyAgent:
    """Ten model turns, each with one tool call and 100 input / 10 output tokens (20 cached reads)."""

    def host_paths(self) -> list[Path]:
        return []

    async def run(self, request: AgentRequest, sink: EventSink) -> AgentResult:
        for i in range(10):
            usage = Usage(input_tokens=100, output_tokens=10, cache_read_tokens=20)
            sink.write(
                Message(
                    role="assistant",
                    model="claude-sonnet-4-5",
                    usage=usage,
                    content=[{"type": "text", "text": f"step {i}"}],
                )
            )
            sink.write(ToolCall(id=f"c{i}", name="Bash", input={"command": f"echo {i}"}))
            sink.write(ToolResult(id=f"c{i}", output=str(i)))
            await asyncio.sleep(0.01)
        return AgentResult(num_turns=10, final_message="done")


class QuietAgent:
    """Says one thing, then thinks silently for a minute."""

    def host_paths(self) -> list[Path]:
        return []

    async def run(self, request: AgentRequest, sink: EventSink) -> AgentResult:
        sink.write(
            Message(role="assistant", model="claude-sonnet-4-5", content=[{"type": "text", "text": "hm"}])
        )
        await asyncio.sleep(60)
        raise AssertionError("not stopped")


@pytest.fixture
def busy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(
        agents.AGENTS, "busy", agents.AgentKind(BusySpec, "tests.episode.test_watch:BusyAgent")
    )
    monkeypatch.setitem(
        agents.AGENTS, "quiet", agents.AgentKind(BusySpec, "tests.episode.test_watch:QuietAgent")
    )


def episode(tmp_path: Path, limits: str, kind: str = "busy") -> EpisodeEnd:
    (task,) = load_tasks(
        [minimal_task(tmp_path, extra=f"run_limits: {limits}\nsandbox: {{driver: tempdir}}\n")]
    )
    task = task.model_copy(update={"agent": BusySpec(type=kind)})
    return asyncio.run(run_episode(EpisodePlan(task), "r", tmp_path / "e.jsonl"))


@pytest.mark.usefixtures("busy")
def test_no_limit_lets_the_agent_finish(tmp_path: Path) -> None:
    end = episode(tmp_path, "{}")

    assert (end.status, end.error, end.notes) == ("completed", None, [])


@pytest.mark.usefixtures("busy")
@pytest.mark.parametrize(
    ("limits", "reason"),
    [
        ("{max_tool_calls: 3}", "more than max_tool_calls 3 tool calls"),
        ("{max_output_tokens: 35}", "used 40 tokens > max_output_tokens 35"),
        ("{max_input_tokens: 250}", "used 360 tokens > max_input_tokens 250"),
        ("{max_input_tokens: 250, count_cached_input: false}", "used 300 tokens > max_input_tokens 250"),
        ("{max_total_tokens: 500}", "used 520 tokens > max_total_tokens 500"),
    ],
)
def test_limits_stop_the_agent_as_its_agents_failure(tmp_path: Path, limits: str, reason: str) -> None:
    end = episode(tmp_path, limits)

    assert (end.outcome, end.status) == ("fail", "budget_exceeded")
    assert reason in (end.error or "")


@pytest.mark.usefixtures("busy")
def test_expected_turns_is_only_noted(tmp_path: Path) -> None:
    end = episode(tmp_path, "{expected_turns: 4}")

    assert end.status == "completed" and end.notes == ["10 turns, more than the 4 expected_turns"]


@pytest.mark.usefixtures("busy")
def test_turn_timeout_stops_a_silent_agent(tmp_path: Path) -> None:
    started = time.monotonic()

    end = episode(tmp_path, "{turn_timeout: 1, task_timeout: 30}", kind="quiet")

    assert (end.outcome, end.status) == ("fail", "timeout") and "turn_timeout of 1 s" in (end.error or "")
    assert time.monotonic() - started < 10


def test_older_spellings_of_the_timeouts(tmp_path: Path) -> None:
    path = minimal_task(tmp_path, extra="task_timeout: 42\nagent: {type: claude-code, turn_timeout: 7}\n")

    (task,) = load_tasks([path])

    assert (task.run_limits.task_timeout, task.run_limits.turn_timeout) == (42, 7)


def test_the_watch_records_everything_it_is_given(tmp_path: Path) -> None:
    with TrajectoryWriter(tmp_path / "w.jsonl") as sink:
        watch = Watch(sink, RunLimits())
        watch.write(ToolCall(id="a", name="Bash"))
        watch.write(ToolCall(id="b", name="Read", parent_tool_use_id="a"))  # a sub-agent's call

        assert watch.tool_calls == 1 and len(sink.events) == 2
