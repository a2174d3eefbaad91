"""``tool_order``: the first call matching ``first`` comes before the first call matching ``then``.

Each side is a tool name, or ``{tool, input_pattern}`` where ``input_pattern`` is searched in the
call's input as JSON. The criterion fails when either side never happens (details say which), and
when one call matches both sides first (it cannot come before itself).

Example::

    - type: tool_order
      description: read the runbook before deploying
      first: {tool: Read, input_pattern: "docs/runbook\\.md"}
      then: {tool: Bash, input_pattern: "deploy\\.sh"}

    - type: tool_order
      first: Grep
      then: Edit
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from coder_eval.criteria.base import CriterionSpec, GradingContext, Regex, Verdict
from coder_eval.criteria.transcript import ToolStep, matches_tool, tool_steps
from coder_eval.patterns import bounded


class ToolPattern(BaseModel):
    """A tool call to look for: a tool name, optionally with a regex over its JSON input."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    tool: str = Field(description="Tool name, matched exactly.")
    input_pattern: Regex | None = Field(default=None, description="Regex searched in the input as JSON.")

    @model_validator(mode="before")
    @classmethod
    def _from_name(cls, value: Any) -> Any:
        return {"tool": value} if isinstance(value, str) else value

    def first_in(self, steps: list[ToolStep]) -> ToolStep | None:
        """The first matching step, or None."""
        return next((s for s in steps if matches_tool(s, self.tool, self.input_pattern)), None)

    def __str__(self) -> str:
        return self.tool if self.input_pattern is None else f"{self.tool} matching {self.input_pattern!r}"


class ToolOrder(CriterionSpec):
    needs = frozenset({"trajectory"})
    type: Literal["tool_order"] = "tool_order"
    first: ToolPattern = Field(
        description="The call that must come first (a tool name or {tool, input_pattern})."
    )
    then: ToolPattern = Field(description="The call that must come after it.")

    async def evaluate(self, ctx: GradingContext) -> Verdict:
        return await bounded(self._verdict_on, tool_steps(ctx.events))

    def _verdict_on(self, steps: list[ToolStep]) -> Verdict:
        first, then = self.first.first_in(steps), self.then.first_in(steps)
        details: dict[str, Any] = {
            "first": first.describe() if first else None,
            "then": then.describe() if then else None,
        }
        if first is None or then is None:
            sides = (("first", self.first, first), ("then", self.then, then))
            missing = [
                f"{side} ({pattern}) was never called" for side, pattern, step in sides if step is None
            ]
            return Verdict(score=0.0, details={**details, "error": "; ".join(missing)})
        if first.index == then.index:
            details["error"] = f"call #{first.index} matches both sides; no earlier call matched {self.first}"
        elif first.index > then.index:
            details["error"] = (
                f"{self.then} (call #{then.index}) came before {self.first} (call #{first.index})"
            )
        return Verdict(score=0.0 if "error" in details else 1.0, details=details)
