"""``commands_efficiency``: how close the agent came to the number of tool calls the task needs.

The score is ``expected / max(actual, expected)``: 1.0 at or under ``expected`` calls, 0.5 at twice
as many. ``tool`` restricts the count to one tool (exact name). ``expected_commands`` is the same
field, and a task's top-level ``expected_commands`` is used when the criterion gives none. The
default ``pass_threshold`` of 0.9 allows one extra call in ten (up to ``expected / 0.9`` calls);
set it to the share you accept (1.0: no extra call; 0.5: up to twice as many), or give the
criterion ``weight: 0`` to record efficiency without gating on it. Doing nothing scores 1.0: pair
this criterion with one that checks the work.

Example::

    - type: commands_efficiency
      description: about four shell commands suffice
      expected: 4
      tool: Bash
      pass_threshold: 0.5
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import AliasChoices, Field

from coder_eval.agents.tools import canonical_name
from coder_eval.criteria.base import GradingContext, OriginalCriterion, TaskFacts, Verdict
from coder_eval.criteria.transcript import tool_steps
from coder_eval.errors import GraderError


class CommandsEfficiency(OriginalCriterion):
    needs = frozenset({"trajectory"})
    type: Literal["commands_efficiency"] = "commands_efficiency"
    expected: int | None = Field(
        default=None,
        ge=1,
        validation_alias=AliasChoices("expected", "expected_commands"),
        description="Tool calls a good solution needs (default: the task's expected_commands).",
    )
    tool: str | None = Field(
        default=None, description="Count only this tool's calls (exact name; null: all)."
    )

    @classmethod
    def task_defaults(cls, raw: dict[str, Any], task: Mapping[str, Any]) -> dict[str, Any]:
        """A task's ``expected_commands`` is the budget of each ``commands_efficiency`` giving none."""
        if task.get("expected_commands") is None or {"expected", "expected_commands"} & set(raw):
            return raw
        return {**raw, "expected_commands": task["expected_commands"]}

    def task_problem(self, task: TaskFacts) -> str | None:
        if self.expected is None:
            return (
                "commands_efficiency needs 'expected' (or 'expected_commands'), or the task's top-level "
                "expected_commands"
            )
        return None

    async def evaluate(self, ctx: GradingContext) -> Verdict:
        if self.expected is None:
            raise GraderError("commands_efficiency: no 'expected' here and no expected_commands on the task")
        steps = tool_steps(ctx.events)
        actual = sum(1 for s in steps if self.tool is None or s.name == canonical_name(self.tool))
        score = self.expected / max(actual, self.expected)
        details = {
            "actual": actual,
            "expected": self.expected,
            "tool": self.tool or "any",
            "calls_by_tool": dict(Counter(s.name for s in steps).most_common()),
        }
        return Verdict(score=score, details=details)
