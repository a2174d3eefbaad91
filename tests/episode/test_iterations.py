"""max_iterations (the graders' failures become the next turn), stop_early, and provider retries."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from coder_eval.criteria import GradingContext
from coder_eval.criteria.early_stop import StopEarly
from coder_eval.episode.iterations import armed_criteria, armed_outcome, early_stop_check, feedback_text
from coder_eval.episode.plan import EpisodePlan
from coder_eval.episode.runner import run_episode
from coder_eval.sandbox import FakeSandbox
from coder_eval.task import load_tasks
from coder_eval.trajectory import CriterionResult, Message, ToolCall, ToolResult, read_trajectory
from tests.helpers import write_task

FIXTURES = Path(__file__).parent.parent / "security" / "fixtures"
FIX = "sed -i 's/return a - b  # add/return a + b  # add/' calc/core.py"
ITERATE = f"""
task_id: iterate
initial_prompt: Make calc.add add.
agent: {{type: claude-code, model: scripted, permission_mode: bypassPermissions}}
max_iterations: 2
sandbox:
  template_sources: [{{type: template_dir, path: {FIXTURES / "calc"}}}]
hidden_tests: {{path: {FIXTURES / "hidden"}}}
scripted:
  model: claude-sonnet-4-5
  turns:
    - blocks: [{{text: "It looks fine to me."}}]
    - when: {{request_contains: "check(s) failed"}}
      blocks: [{{tool_use: {{name: Bash, input: {{command: "{FIX}"}}}}}}]
    - blocks: [{{text: "Fixed."}}]
success_criteria:
  - {{id: hidden, type: hidden_tests, command: python -m pytest -q hidden_tests}}
"""


@pytest.mark.slow
def test_a_failed_grading_becomes_the_next_turn_until_it_passes(tmp_path: Path) -> None:
    (task,) = load_tasks([write_task(tmp_path, ITERATE)])

    end = asyncio.run(run_episode(EpisodePlan(task), "r", tmp_path / "e.jsonl"))

    events = read_trajectory(tmp_path / "e.jsonl").events
    feedback = [e for e in events if isinstance(e, Message) and e.role == "user" and e.simulated]
    assert (end.outcome, end.status) == ("pass", "completed"), end.error
    assert (
        len(feedback) == 1 and "1 check(s) failed (attempt 2 of 2 follows)" in feedback[0].content[0]["text"]
    )


def test_max_iterations_needs_an_agent_that_keeps_its_session(tmp_path: Path) -> None:
    body = ITERATE.replace(
        "type: claude-code, model: scripted, permission_mode: bypassPermissions",
        "type: command, command: 'true'",
    )
    with pytest.raises(Exception, match="max_iterations needs an agent that keeps its session"):
        load_tasks([write_task(tmp_path, body)])


@pytest.mark.parametrize(("kind", "outcome"), [("oracle", "pass"), ("none", "fail")])
def test_the_oracle_and_none_run_one_iteration_and_say_so(tmp_path: Path, kind: str, outcome: str) -> None:
    from coder_eval.experiment import CommandLine, load_experiment, resolve

    path = write_task(tmp_path, ITERATE + f'reference_solution: "{FIX}"\n')
    (plan,) = resolve(load_experiment(None), [path], CommandLine(agent=kind)).plans

    end = asyncio.run(run_episode(plan, "r", tmp_path / "e.jsonl"))

    events = read_trajectory(tmp_path / "e.jsonl").events
    assert (end.status, end.outcome) == ("completed", outcome), end.error
    assert not [e for e in events if isinstance(e, Message) and e.simulated]  # no feedback turn
    assert (
        f"max_iterations 2: the {kind} agent has nothing to feed the graders' failures back to"
        in " ".join(end.notes)
    )


def test_feedback_names_what_failed() -> None:
    failing = [
        CriterionResult(
            criterion_id="hidden",
            kind="hidden_tests",
            description="the tests pass",
            score=0.5,
            passed=False,
            details={"output": "2 failed, 2 passed"},
        )
    ]

    text = feedback_text(failing, 2, 3)

    assert "the tests pass (score 0.50): 2 failed, 2 passed" in text and "attempt 2 of 3" in text


def armed_task(tmp_path: Path, on_pass: str, decide_within: int | None) -> object:
    body = """
    task_id: early
    initial_prompt: p
    agent: {type: oracle}
    success_criteria:
      - {id: ran-tests, type: command_executed, pattern: pytest}
      - {id: other, type: file_exists, path: x}
    """
    (task,) = load_tasks([write_task(tmp_path, body)])
    criterion = task.success_criteria[0]
    rule = StopEarly(on_pass=on_pass, decide_within=decide_within)  # type: ignore[arg-type]
    object.__setattr__(criterion, "stop_early", rule)  # armed as stop_early would
    return task


@pytest.mark.parametrize(
    ("on_pass", "decide_within", "commands", "decided"),
    [
        ("stop", None, ["ls"], False),
        ("stop", None, ["ls", "pytest -q"], True),
        ("continue", None, ["pytest -q"], False),
        ("continue", 2, ["pytest -q", "ls"], True),
        ("stop", 3, ["ls", "ls"], False),
        ("stop", 3, ["ls", "ls", "ls"], True),
    ],
)
def test_armed_criteria_are_decided_by_passing_or_by_their_window(
    tmp_path: Path, on_pass: str, decide_within: int | None, commands: list[str], decided: bool
) -> None:
    task = armed_task(tmp_path, on_pass, decide_within)
    events = []
    for i, command in enumerate(commands):
        events += [ToolCall(id=f"c{i}", name="Bash", input={"command": command}), ToolResult(id=f"c{i}")]
    armed = armed_criteria(task)  # type: ignore[arg-type]
    check = early_stop_check(armed, lambda evs: GradingContext(FakeSandbox(), evs, tmp_path))

    assert check is not None and asyncio.run(check(events)) is decided


def test_an_early_stop_is_gated_on_the_armed_criteria_alone(tmp_path: Path) -> None:
    armed = armed_criteria(armed_task(tmp_path, "stop", None))  # type: ignore[arg-type]
    results = [
        CriterionResult(criterion_id="ran-tests", kind="command_executed", score=1, passed=True),
        CriterionResult(criterion_id="other", kind="file_exists", score=0, passed=False),
    ]

    assert armed_outcome(results, armed, 1.0)
    assert not armed_outcome(results[1:], armed, 1.0)


def test_stop_early_false_disarms_every_criterion(tmp_path: Path) -> None:
    task = armed_task(tmp_path, "stop", None)
    task = task.model_copy(update={"run_limits": task.run_limits.model_copy(update={"stop_early": False})})  # type: ignore[attr-defined]

    assert armed_criteria(task) == []  # type: ignore[arg-type]


RETRIED = """
task_id: retried
initial_prompt: Do it.
agent:
  type: claude-code
  model: scripted
  permission_mode: bypassPermissions
  env: {CLAUDE_CODE_MAX_RETRIES: "0"}
retry: {max_retries: 1, initial_delay: 0}
scripted:
  turns:
    - error: {kind: rate_limit, times: 1}
    - blocks: [{text: "Done."}]
success_criteria: [{type: message_matches, pattern: Done}]
"""


@pytest.mark.slow
def test_a_rate_limited_attempt_is_retried_and_kept_aside(tmp_path: Path) -> None:
    (task,) = load_tasks([write_task(tmp_path, RETRIED)])

    end = asyncio.run(run_episode(EpisodePlan(task), "r", tmp_path / "e.jsonl"))

    first = read_trajectory(tmp_path / "e.jsonl.attempt1").end
    assert first is not None and (first.outcome, first.status) == ("invalid", "infra_error")
    assert (end.outcome, end.status) == ("pass", "completed")


EARLY = """
task_id: early-stop
initial_prompt: Run the tests, then tidy up.
agent: {type: claude-code, model: scripted, permission_mode: bypassPermissions}
scripted:
  model: claude-sonnet-4-5
  turns:
    - blocks: [{tool_use: {name: Bash, input: {command: "echo ran > ran.txt"}}}]
    - blocks: [{tool_use: {name: Bash, input: {command: "echo late > late.txt"}}}]
    - blocks: [{text: "Done."}]
success_criteria:
  - {id: ran, type: command_executed, pattern: "echo ran", stop_early: {on_pass: stop}}
  - {id: never, type: file_exists, path: nowhere.txt}
"""


@pytest.mark.slow
def test_an_armed_criterion_that_passes_stops_the_agent_at_the_next_tool_boundary(tmp_path: Path) -> None:
    (task,) = load_tasks([write_task(tmp_path, EARLY)])

    end = asyncio.run(run_episode(EpisodePlan(task), "r", tmp_path / "e.jsonl"))

    events = read_trajectory(tmp_path / "e.jsonl").events
    commands = [e.input.get("command") for e in events if isinstance(e, ToolCall)]
    verdicts = {e.criterion_id: e.passed for e in events if isinstance(e, CriterionResult)}
    assert (end.status, end.outcome) == ("stopped_early", "pass"), end.error  # gated on `ran` alone
    assert commands == ["echo ran > ran.txt"]  # the second tool call was never made
    assert verdicts == {"ran": True, "never": False}  # the others are still graded and recorded


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ("agent: {type: command, command: 'true'}", "a command agent's events are read after it exits"),
        ("max_iterations: 2", "cannot be combined with max_iterations"),
    ],
)
def test_stop_early_is_refused_where_it_cannot_work(tmp_path: Path, change: str, message: str) -> None:
    body = EARLY.replace("scripted:\n", f"{change}\nscripted:\n", 1)
    if change.startswith("agent:"):
        body = body.replace(
            "agent: {type: claude-code, model: scripted, permission_mode: bypassPermissions}\n", "", 1
        )

    with pytest.raises(Exception, match=message):
        load_tasks([write_task(tmp_path, body)])


def test_the_oracle_is_never_stopped_early(tmp_path: Path) -> None:
    body = EARLY.replace(
        "agent: {type: claude-code, model: scripted, permission_mode: bypassPermissions}",
        "agent: {type: oracle}\nreference_solution: echo ran > ran.txt && echo late > late.txt",
    )
    (task,) = load_tasks([write_task(tmp_path, body)])

    end = asyncio.run(run_episode(EpisodePlan(task), "r", tmp_path / "e.jsonl"))

    assert (end.status, end.outcome) == ("completed", "fail")
