"""``commands_efficiency``: how close the agent came to the number of tool calls the task needs.

The score is ``expected / max(actual, expected)``: 1.0 at or under ``expected`` calls, 0.5 at twice
as many. ``tool`` restricts the count to one tool (exact name). The default ``pass_threshold`` of 1.0
fails any extra call; set it to the share you accept (0.5: up to twice the expected calls), or give
the criterion ``weight: 0`` to record efficiency without gating on it. Doing nothing scores 1.0:
pair this criterion with one that checks the work.

Example::

    - type: commands_efficiency
      description: about four shell commands suffice
      expected: 4
      tool: Bash
      pass_threshold: 0.5
"""

from __future__ import annotations

from collections import Counter
from typing import Literal

from pydantic import Field

from coder_eval.criteria.base import CriterionSpec, GradingContext, Verdict
from coder_eval.criteria.transcript import tool_steps
from coder_eval.tools import canonical_name


class CommandsEfficiency(CriterionSpec):
    needs = frozenset({"trajectory"})
    type: Literal["commands_efficiency"] = "commands_efficiency"
    expected: int = Field(ge=1, description="Tool calls a good solution needs.")
    tool: str | None = Field(
        default=None, description="Count only this tool's calls (exact name; null: all)."
    )

    async def evaluate(self, ctx: GradingContext) -> Verdict:
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
