"""Builders for the criterion tests: synthetic trajectories, a grading context, load-time errors.

Example::

    events = Transcript().bash("pytest -q", exit_code=1).say("Done.").events
    verdict = grade({"type": "command_executed", "pattern": "pytest"}, context(events))
"""

from __future__ import annotations

import asyncio
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import pytest
from pydantic import TypeAdapter

from coder_eval.criteria import Criterion, CriterionSpec, GradingContext, Verdict
from coder_eval.errors import TaskError
from coder_eval.sandbox import FakeSandbox
from coder_eval.task import load_tasks
from coder_eval.trajectory import Event, Message, ToolCall, ToolResult

CRITERION: TypeAdapter[CriterionSpec] = TypeAdapter(Criterion)  # type: ignore[arg-type]


@dataclass
class Transcript:
    """An episode's events, built call by call."""

    events: list[Event] = field(default_factory=list)

    def tool(
        self, name: str, tool_input: dict[str, Any], *, is_error: bool = False, exit_code: int | None = None
    ) -> Transcript:
        call_id = f"call-{len(self.events)}"
        self.events.append(ToolCall(id=call_id, name=name, input=tool_input))
        self.events.append(ToolResult(id=call_id, output="", is_error=is_error, exit_code=exit_code))
        return self

    def bash(self, command: str, exit_code: int = 0) -> Transcript:
        return self.tool("Bash", {"command": command}, is_error=exit_code != 0, exit_code=exit_code)

    def read(self, path: str) -> Transcript:
        return self.tool("Read", {"file_path": path})

    def say(self, text: str, role: Literal["assistant", "user", "system"] = "assistant") -> Transcript:
        self.events.append(Message(role=role, content=[{"type": "text", "text": text}]))
        return self


def context(
    events: Sequence[Event] = (),
    root: Path | None = None,
    final_message: str | None = None,
    agent_paths: Mapping[str, str] | None = None,
) -> GradingContext:
    """A grading context over an in-memory copy of ``root`` (the workspace the agent left).

    ``agent_paths`` says where the agent ran (default: ``root`` as its working directory).
    """
    sandbox = FakeSandbox.from_folder(root) if root is not None else FakeSandbox()
    paths = agent_paths if agent_paths is not None else ({"workdir": str(root)} if root else {})
    return GradingContext(
        sandbox=sandbox,
        events=list(events),
        task_dir=Path.cwd(),
        final_message=final_message,
        agent_paths=paths,
    )


def criterion(data: Mapping[str, Any]) -> CriterionSpec:
    """A criterion from its YAML fields, validated as a task file would."""
    return CRITERION.validate_python(dict(data))


def evaluate(spec: CriterionSpec, ctx: GradingContext) -> Verdict:
    return asyncio.run(spec.evaluate(ctx))


def grade(data: Mapping[str, Any], ctx: GradingContext) -> Verdict:
    """Validate a criterion from its YAML fields and grade ``ctx`` with it."""
    return evaluate(criterion(data), ctx)


def reason(data: Mapping[str, Any], ctx: GradingContext) -> str:
    """The failure reason every surface prints for ``data`` graded on ``ctx`` (``coder_eval.failures``)."""
    from coder_eval.failures import criterion_reason
    from coder_eval.trajectory import CriterionResult

    verdict = grade(data, ctx)
    kind = str(data["type"])
    result = CriterionResult(
        criterion_id=kind, kind=kind, score=verdict.score, passed=False, details=verdict.details
    )
    return criterion_reason(result)


def passes(data: Mapping[str, Any], ctx: GradingContext) -> bool:
    """Whether the runner would record this criterion as passed."""
    spec = criterion(data)
    verdict = evaluate(spec, ctx)
    return verdict.passed if verdict.passed is not None else verdict.score >= spec.pass_threshold


def load_error(folder: Path, criteria_yaml: str, extra: str = "") -> str:
    """The TaskError a task file with these ``success_criteria`` items (and ``extra`` top-level
    fields) raises at load time."""
    body = f"task_id: t\ninitial_prompt: p\n{extra}success_criteria:\n" + textwrap.indent(
        textwrap.dedent(criteria_yaml).strip() + "\n", "  "
    )
    path = folder / "task.yaml"
    path.write_text(body, encoding="utf-8")
    with pytest.raises(TaskError) as caught:
        load_tasks([path])
    return str(caught.value)
