"""``command_executed``: the agent ran a matching shell command (or did not, with ``max_count: 0``).

``pattern`` is searched (``re.search``) in each command as the agent ran it: the ``command`` input of
``tool`` calls (``Bash`` by default; a tool without a ``command`` input is matched on its JSON input).
Commands that also match ``exclude`` do not count; with ``require_success`` only calls whose result
is not an error and exited 0 count. The criterion passes (score 1) when the count lies in
``[min_count, max_count]``.

Example::

    - type: command_executed
      description: ran the test suite, and it passed
      pattern: "\\bpytest\\b"
      exclude: "--collect-only"
      require_success: true

    - type: command_executed
      description: never force-pushed
      pattern: "git push .*(--force|-f\\b)"
      min_count: 0
      max_count: 0
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, model_validator

from coder_eval.criteria.base import CriterionSpec, GradingContext, Regex, Verdict
from coder_eval.criteria.transcript import DETAIL_LIMIT, ToolStep, tool_steps
from coder_eval.tools import canonical_name


class CommandExecuted(CriterionSpec):
    needs = frozenset({"trajectory"})
    type: Literal["command_executed"] = "command_executed"
    tool: str = Field(default="Bash", description="Tool whose calls are checked (exact name).")
    pattern: Regex = Field(description="Regex searched in each command as run.")
    exclude: Regex | None = Field(default=None, description="Commands matching this regex do not count.")
    min_count: int = Field(default=1, ge=0, description="At least this many matching commands.")
    max_count: int | None = Field(
        default=None,
        ge=0,
        description="At most this many (null: no limit; 0 with min_count 0: must not run).",
    )
    require_success: bool = Field(
        default=False, description="Count a command only if its result is not an error and it exited 0."
    )

    @model_validator(mode="after")
    def _range(self) -> CommandExecuted:
        if self.max_count is not None and self.max_count < self.min_count:
            raise ValueError(f"max_count ({self.max_count}) is below min_count ({self.min_count})")
        return self

    def _matches(self, step: ToolStep) -> bool:
        if step.name != canonical_name(self.tool) or not re.search(self.pattern, step.command):
            return False
        return self.exclude is None or not re.search(self.exclude, step.command)

    async def evaluate(self, ctx: GradingContext) -> Verdict:
        steps = [s for s in tool_steps(ctx.events) if s.name == canonical_name(self.tool)]
        matching = [s for s in steps if self._matches(s)]
        counted = [s for s in matching if s.succeeded or not self.require_success]
        count = len(counted)
        ok = count >= self.min_count and (self.max_count is None or count <= self.max_count)
        upper = "∞" if self.max_count is None else str(self.max_count)
        details = {
            "count": count,
            "expected": f"{self.min_count}..{upper}",
            "commands": [s.describe() for s in counted][:DETAIL_LIMIT],
            "tool_calls": len(steps),
        }
        failed = [s for s in matching if not s.succeeded] if self.require_success else []
        if failed:
            details["unsuccessful"] = [_with_exit(s) for s in failed][:DETAIL_LIMIT]
        return Verdict(score=1.0 if ok else 0.0, details=details)


def _with_exit(step: ToolStep) -> str:
    if step.result is None:
        return f"{step.describe()} (no result)"
    return f"{step.describe()} (exit {step.result.exit_code}, is_error {step.result.is_error})"
