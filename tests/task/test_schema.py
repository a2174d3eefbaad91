"""The schema asks each agent kind and criterion what it needs of a task: it names no kind."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from coder_eval.agents import Capabilities, kinds_that
from coder_eval.agents.claude_code.spec import ClaudeCodeSpec
from coder_eval.agents.command_spec import CommandSpec
from coder_eval.criteria.base import TaskFacts
from coder_eval.criteria.file_exists import FileExists
from coder_eval.task import TaskSpec

CHECK = {"type": "file_exists", "path": "out.txt"}


def task(**fields: Any) -> TaskSpec:
    return TaskSpec.model_validate(
        {"task_id": "t", "initial_prompt": "go", "success_criteria": [CHECK], **fields}
    )


def test_the_built_in_kinds_carry_their_capabilities() -> None:
    assert kinds_that(lambda c: c.keeps_session) == ["claude-code"]
    assert kinds_that(lambda c: c.checks_graders) == ["oracle", "none"]
    assert kinds_that(lambda c: not c.live_events) == ["command"]
    assert set(kinds_that(lambda c: c.talks_to_model)) == {"claude-code", "codex", "opencode", "gemini"}


def test_a_kind_that_keeps_its_session_may_iterate_whatever_its_name(monkeypatch: pytest.MonkeyPatch) -> None:
    command = {"type": "command", "command": "true"}
    with pytest.raises(ValidationError, match="max_iterations needs an agent that keeps its session"):
        task(agent=command, max_iterations=3)
    monkeypatch.setattr(CommandSpec, "CAPABILITIES", Capabilities(keeps_session=True))
    assert task(agent=command, max_iterations=3).max_iterations == 3


def test_stop_early_is_refused_where_the_kind_sees_no_events_live(monkeypatch: pytest.MonkeyPatch) -> None:
    armed = {"type": "skill_triggered", "skill": "pdf", "stop_early": True}
    assert task(success_criteria=[armed]).run_limits.stop_early
    monkeypatch.setattr(ClaudeCodeSpec, "CAPABILITIES", Capabilities(live_events=False))
    with pytest.raises(ValidationError, match="a claude-code agent's events are read after it exits"):
        task(success_criteria=[armed])


def test_a_model_agent_cannot_be_cut_off_from_its_model(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValidationError, match=r"sandbox\.network: none cuts the claude-code agent off"):
        task(sandbox={"network": "none"})
    monkeypatch.setattr(ClaudeCodeSpec, "CAPABILITIES", Capabilities())
    assert task(sandbox={"network": "none"}).sandbox.network == "none"


def test_a_criterion_says_what_it_needs_of_its_task(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[TaskFacts] = []

    def needs_a_recorder(self: FileExists, facts: TaskFacts) -> str | None:
        seen.append(facts)
        return None if facts.recorders else "file_exists wants a recorded CLI here"

    monkeypatch.setattr(FileExists, "task_problem", needs_a_recorder)
    with pytest.raises(ValidationError, match=r"success_criteria\[0\]: file_exists wants a recorded CLI"):
        task()
    recorded = task(sandbox={"record_cli": [{"name": "gh"}]})
    assert recorded.success_criteria[0].type == "file_exists" and dict(seen[-1].recorders) == {
        "gh": "cli_mocks/calls.jsonl"
    }


def test_a_criterion_takes_its_defaults_from_the_task() -> None:
    efficiency = {"type": "commands_efficiency"}
    with pytest.raises(ValidationError, match="commands_efficiency needs 'expected'"):
        task(success_criteria=[efficiency])
    (filled,) = task(success_criteria=[efficiency], expected_commands=4).success_criteria
    assert getattr(filled, "expected", None) == 4
    (own,) = task(success_criteria=[{**efficiency, "expected": 2}], expected_commands=4).success_criteria
    assert getattr(own, "expected", None) == 2
