"""``tool_used``: the agent called a tool between ``min`` and ``max`` times.

``tool`` is an exact tool name (``Read``, ``Edit``, ``WebFetch``, ``mcp__github__create_issue``).
``input_pattern``, when given, is searched (``re.search``) in the call's input dumped as JSON, e.g.
``{"file_path": "/sandbox/docs/deploy.md"}``; only calls whose input matches count.

Example::

    - type: tool_used
      description: looked the API up in the docs
      tool: Read
      input_pattern: "docs/.*\\.md"

    - type: tool_used
      description: never browsed the web
      tool: WebFetch
      min: 0
      max: 0
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from coder_eval.criteria.base import CriterionSpec, GradingContext, Regex, Verdict
from coder_eval.criteria.transcript import DETAIL_LIMIT, ToolStep, matches_tool, tool_steps
from coder_eval.patterns import bounded


class ToolUsed(CriterionSpec):
    needs = frozenset({"trajectory"})
    type: Literal["tool_used"] = "tool_used"
    tool: str = Field(description="Tool name, matched exactly.")
    input_pattern: Regex | None = Field(
        default=None, description="Regex searched in the call's input as JSON; only matching calls count."
    )
    min: int = Field(default=1, ge=0, description="At least this many calls.")
    max: int | None = Field(default=None, ge=0, description="At most this many calls (null: no limit).")

    @model_validator(mode="after")
    def _range(self) -> ToolUsed:
        if self.max is not None and self.max < self.min:
            raise ValueError(f"max ({self.max}) is below min ({self.min})")
        return self

    async def evaluate(self, ctx: GradingContext) -> Verdict:
        return await bounded(self._verdict_on, tool_steps(ctx.events))

    def _verdict_on(self, steps: list[ToolStep]) -> Verdict:
        calls = [s for s in steps if matches_tool(s, self.tool, self.input_pattern)]
        count = len(calls)
        ok = count >= self.min and (self.max is None or count <= self.max)
        details = {
            "count": count,
            "expected": f"{self.min}..{'∞' if self.max is None else self.max}",
            "calls": [s.describe() for s in calls][:DETAIL_LIMIT],
        }
        if not calls:
            details["tools_used"] = sorted({s.name for s in steps})
        return Verdict(score=1.0 if ok else 0.0, details=details)
