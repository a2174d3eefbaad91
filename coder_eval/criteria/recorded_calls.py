"""``recorded_calls``: replay what a recording shim logged and match the expected calls.

The calls are the harness's own records (``cli_call`` events in the trajectory), never a log file the
agent could edit. Each expected call matches a recorded call by ``args_regex`` (searched in the
shell-quoted arguments, program name left out), an optional ``exit_code`` and optional JMESPath
``stdout_json`` assertions on the call's JSON output. With ``ordered``, matches must come in the
listed order. ``forbid`` lists calls that must not happen. The score is the share of checks that hold.

Example::

    - type: recorded_calls
      shim: sitectl
      expect:
        - args_regex: "^pages create"
          stdout_json: [{expression: request.method, equals: POST}]
      forbid: [{args_regex: "--force"}]
"""

from __future__ import annotations

import json
import shlex
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from coder_eval.criteria.base import CriterionSpec, GradingContext, Regex, TaskFacts, Verdict, fraction
from coder_eval.criteria.json_check import Assertion
from coder_eval.errors import GraderError, did_you_mean
from coder_eval.patterns import bounded, search
from coder_eval.trajectory import CliCall


class CallPattern(BaseModel):
    """What one logged call must look like."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    args_regex: Regex = Field(default="", description="Regex searched in the shell-quoted arguments.")
    exit_code: int | None = Field(default=None, description="Required exit code.")
    stdout_json: list[Assertion] = Field(default_factory=list, description="Assertions on JSON stdout.")

    def matches(self, call: CliCall) -> bool:
        if not search(self.args_regex, shlex.join(call.argv[1:])):
            return False
        if self.exit_code is not None and call.exit_code != self.exit_code:
            return False
        if not self.stdout_json:
            return True
        try:
            document: Any = json.loads(call.stdout)
        except (ValueError, RecursionError):  # not JSON, an integer past the int-string limit, too deep
            return False
        return all(a.holds(document) for a in self.stdout_json)


class RecordedCalls(CriterionSpec):
    needs = frozenset({"trajectory"})
    type: Literal["recorded_calls"] = "recorded_calls"
    shim: str = Field(description="Name of a shim declared in sandbox.shims.")
    expect: list[CallPattern] = Field(default_factory=list, description="Calls that must have happened.")
    forbid: list[CallPattern] = Field(default_factory=list, description="Calls that must not happen.")
    ordered: bool = Field(default=False, description="Expected calls must match in this order.")
    min_calls: int = Field(default=0, ge=0, description="At least this many calls in all.")

    def task_problem(self, task: TaskFacts) -> str | None:
        if self.shim in task.recorders:
            return None
        return (
            f"criterion {self.type!r} reads shim {self.shim!r}{did_you_mean(self.shim, task.recorders)}, "
            f"but sandbox.shims and record_cli declare {sorted(task.recorders) or 'none'}"
        )

    async def evaluate(self, ctx: GradingContext) -> Verdict:
        if self.shim not in ctx.recorders:
            raise GraderError(f"no shim named {self.shim!r}; declared: {', '.join(ctx.recorders) or 'none'}")
        return await bounded(self._verdict_on, ctx.cli_calls([self.shim]))

    def _verdict_on(self, calls: list[CliCall]) -> Verdict:
        checks: dict[str, bool] = {}
        cursor = 0
        for i, pattern in enumerate(self.expect):
            start = cursor if self.ordered else 0
            hit = next((j for j in range(start, len(calls)) if pattern.matches(calls[j])), None)
            checks[f"expect[{i}] {pattern.args_regex!r}"] = hit is not None
            if hit is not None:
                cursor = hit + 1
        for i, pattern in enumerate(self.forbid):
            checks[f"forbid[{i}] {pattern.args_regex!r}"] = not any(pattern.matches(c) for c in calls)
        if self.min_calls:
            checks[f"at least {self.min_calls} calls"] = len(calls) >= self.min_calls
        details = {
            "calls": [shlex.join(c.argv) for c in calls][:50],
            "failed": [name for name, ok in checks.items() if not ok],
        }
        return Verdict(score=fraction(checks), details=details)
