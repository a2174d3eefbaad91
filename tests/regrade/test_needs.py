"""What criteria declare they read (``needs``) holds: regrade grades the ones that need only the
trajectory on episodes without a workspace snapshot, so those must never touch the workspace."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from coder_eval.criteria import CRITERIA, CriterionSpec, GradingContext
from coder_eval.sandbox import FakeSandbox
from coder_eval.sandbox.base import ExecResult
from coder_eval.task import load_tasks
from coder_eval.trajectory import Message, ToolCall, ToolResult
from tests.helpers import REPO

TRAJECTORY_ONLY: dict[str, dict[str, Any]] = {
    "cli_called": {"tool": "gh"},
    "command_executed": {"pattern": "pytest"},
    "command_not_executed": {"pattern": "rm -rf"},
    "commands_efficiency": {"expected": 2},
    "message_matches": {"pattern": "done"},
    "recorded_calls": {"shim": "gh", "min_calls": 1},
    "tool_order": {"first": "Read", "then": "Bash"},
    "tool_used": {"tool": "Bash"},
}
"""A minimal criterion of each kind that declares it needs only the trajectory (baseline_judge comes
from its example task, which has the reference run and a scripted judge)."""


class TouchedWorkspace(Exception):
    """A criterion used a sandbox verb."""


class NoWorkspace(FakeSandbox):
    """A sandbox whose every verb fails the test."""

    def __init__(self) -> None:
        super().__init__({})

    async def exec(self, cmd: str | Sequence[str], **_: Any) -> ExecResult:
        raise TouchedWorkspace(f"exec {cmd!r}")

    async def read_file(self, path: str, **_: Any) -> bytes:
        raise TouchedWorkspace(f"read_file {path!r}")

    async def glob(self, pattern: str, **_: Any) -> list[str]:
        raise TouchedWorkspace(f"glob {pattern!r}")


EVENTS = [
    Message(role="assistant", content=[{"type": "text", "text": "Running the tests."}]),
    ToolCall(id="1", name="Read", input={"file_path": "a.py"}),
    ToolResult(id="1", output="x = 1"),
    ToolCall(id="2", name="Bash", input={"command": "pytest -q"}),
    ToolResult(id="2", output="1 passed", exit_code=0),
    Message(role="assistant", content=[{"type": "text", "text": "All done."}]),
]


def criteria() -> list[CriterionSpec]:
    made = [
        CRITERIA[kind].model_validate({"type": kind, **fields}) for kind, fields in TRAJECTORY_ONLY.items()
    ]
    (baseline,) = load_tasks([REPO / "tasks" / "judges" / "baseline_judge.yaml"])
    return [*made, *baseline.success_criteria]


def grade(criterion: CriterionSpec, task_dir: Path) -> None:
    ctx = GradingContext(
        sandbox=NoWorkspace(),
        events=EVENTS,
        task_dir=task_dir,
        final_message="All done.",
        recorders={"gh": None},
    )
    asyncio.run(criterion.evaluate(ctx))


def test_every_kind_that_needs_only_the_trajectory_is_covered() -> None:
    declared = {kind for kind, spec in CRITERIA.items() if spec.needs == {"trajectory"}}
    assert declared == {*TRAJECTORY_ONLY, "baseline_judge"}


@pytest.mark.parametrize("criterion", criteria(), ids=lambda c: c.type)
def test_a_trajectory_criterion_grades_without_touching_the_workspace(criterion: CriterionSpec) -> None:
    grade(criterion, REPO / "tasks" / "judges")


def test_a_workspace_criterion_does_touch_it() -> None:
    """The check above can fail."""
    with pytest.raises(TouchedWorkspace):
        grade(CRITERIA["file_exists"].model_validate({"type": "file_exists", "path": "a.py"}), REPO)
