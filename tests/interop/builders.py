"""Trajectories for the ATIF tests, written with the real event models.

Example::

    path = write_agent_episode(tmp_path)     # messages, thinking, parallel tools, a sub-agent, a verdict
    export_atif(path, tmp_path / "atif")
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from coder_eval.run_dir import RunDir, RunManifest
from coder_eval.trajectory import (
    CriterionResult,
    EpisodeEnd,
    EpisodeStart,
    Event,
    Message,
    Timings,
    ToolCall,
    ToolResult,
    TrajectoryWriter,
    Usage,
)

RUN_ID = "atif-run"
T0 = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
CALL_USAGE = Usage(input_tokens=10, output_tokens=20, cache_read_tokens=300, cache_creation_tokens=4)
SUB_USAGE = Usage(input_tokens=5, output_tokens=6, cache_read_tokens=70, cache_creation_tokens=0)
END_USAGE = CALL_USAGE + CALL_USAGE + SUB_USAGE + CALL_USAGE


def text(value: str) -> dict[str, str]:
    return {"type": "text", "text": value}


def tool_use(call_id: str, name: str) -> dict[str, object]:
    return {"type": "tool_use", "id": call_id, "name": name, "input": {}}


def start(episode: str, kind: str = "claude-code") -> EpisodeStart:
    return EpisodeStart(
        run_id=RUN_ID,
        episode_id=episode,
        task_id=episode.split("--")[0],
        seed=7,
        tags=["atif"],
        agent={"kind": kind, "model": "claude-sonnet-4-5"},
        task={"initial_prompt": "Fix the bug."},
        versions={"coder_eval": "0.1.0", "python": "3.11"},
    )


def agent_events() -> list[Event]:
    """A Claude Code episode: init, prompt, thinking and two parallel tools (one fails), a sub-agent
    spawned by ``Task`` with its own tool, a simulated user turn, the answer."""
    return [
        Message(role="system", content=[{"type": "init", "claude_code_version": "2.1.0", "tools": ["Bash"]}]),
        Message(role="user", content=[text("Fix the bug."), {"type": "image", "source": "x.png"}]),
        Message(
            role="assistant",
            model="claude-sonnet-4-5",
            usage=CALL_USAGE,
            content=[
                {"type": "thinking", "thinking": "Look first.", "signature": "s"},
                text("Looking."),
                tool_use("a", "Bash"),
                tool_use("b", "Read"),
            ],
        ),
        ToolCall(id="a", name="Bash", input={"command": "ls"}),
        ToolCall(id="b", name="Read", input={"file_path": "missing.py"}),
        ToolResult(id="a", output="calc", output_chars=4, exit_code=0, duration_s=0.25),
        ToolResult(id="b", output="no such file", output_chars=12, is_error=True),
        Message(
            role="assistant", model="claude-sonnet-4-5", usage=CALL_USAGE, content=[tool_use("t", "Task")]
        ),
        ToolCall(id="t", name="Task", input={"prompt": "find the bug"}),
        Message(role="user", content=[text("find the bug")], parent_tool_use_id="t"),
        Message(
            role="assistant",
            model="claude-haiku-4-5",
            usage=SUB_USAGE,
            content=[tool_use("s", "Grep")],
            parent_tool_use_id="t",
        ),
        ToolCall(id="s", name="Grep", input={"pattern": "a - b"}, parent_tool_use_id="t"),
        ToolResult(id="s", output="calc/core.py:2", output_chars=14),
        ToolResult(id="t", output="the bug is in calc/core.py", output_chars=26),
        Message(role="user", content=[text("Please hurry.")], simulated=True),
        Message(role="assistant", model="claude-sonnet-4-5", usage=CALL_USAGE, content=[text("Fixed.")]),
    ]


def verdict(outcome: str = "pass", usage: Usage = END_USAGE, cost: float | None = 0.0125) -> list[Event]:
    passed = outcome == "pass"
    return [
        CriterionResult(criterion_id="tests", kind="hidden_tests", score=float(passed), passed=passed),
        EpisodeEnd(
            outcome=outcome,
            status="completed",
            score=float(passed),
            timings=Timings(setup_s=1.0, agent_s=5.0, grade_s=2.0, total_s=8.0),
            usage=usage,
            cost_usd=cost,
            num_turns=3,
            agent_versions={"claude_code": "2.1.0"},
        ),
    ]


def write_episode(root: Path, episode: str, events: list[Event]) -> Path:
    """A trajectory under ``root/<RUN_ID>/episodes/`` (the run directory is made if needed), events
    one second apart."""
    run = root / RUN_ID
    if not (run / "run.json").exists():
        RunDir.create(root, RunManifest(run_id=RUN_ID))
    path = RunDir(run).episode_path(episode)
    with TrajectoryWriter(path) as sink:
        for second, event in enumerate(events):
            sink.write(event.model_copy(update={"ts": T0 + timedelta(seconds=second)}))
    return path


def write_agent_episode(root: Path) -> Path:
    return write_episode(root, "fix--default--r0", [start("fix--default--r0"), *agent_events(), *verdict()])


def write_oracle_episode(root: Path) -> Path:
    """An oracle's episode: scripted commands, no model, then its answer."""
    events: list[Event] = [start("oracle--default--r0", kind="oracle")]
    for number in (1, 2):
        events += [
            ToolCall(id=f"oracle-{number}", name="Bash", input={"command": f"step {number}"}),
            ToolResult(id=f"oracle-{number}", output="ok", output_chars=2, exit_code=0),
        ]
    events += [Message(role="assistant", content=[text("ok")]), *verdict(usage=Usage(), cost=None)]
    return write_episode(root, "oracle--default--r0", events)


def write_interrupted_episode(root: Path) -> Path:
    """The agent episode cut after the sub-agent's call, before any result or episode_end."""
    events = [start("cut--default--r0"), *agent_events()[:12]]
    return write_episode(root, "cut--default--r0", events)


def write_silent_episode(root: Path) -> Path:
    """The ``none`` agent: nothing between start and end."""
    return write_episode(
        root, "none--default--r0", [start("none--default--r0", kind="none"), *verdict("fail", Usage(), None)]
    )


def write_orphan_result_episode(root: Path) -> Path:
    """A tool result whose call was never recorded."""
    events = [start("orphan--default--r0"), ToolResult(id="lost", output="?"), *verdict()]
    return write_episode(root, "orphan--default--r0", events)
