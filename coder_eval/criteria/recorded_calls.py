"""``recorded_calls``: replay what a recording shim logged and match the expected calls.

The calls are the harness's own records (``cli_call`` events in the trajectory), never a log file the
agent could edit. Each expected call matches a recorded call by ``args_regex`` (searched in the
shell-quoted arguments, program name left out), an optional ``exit_code`` and optional JMESPath
``stdout_json`` assertions on the call's JSON output. With ``ordered``, matches must come in the
listed order. ``forbid`` lists calls that must not happen. The score is the share of checks that hold.

An expectation no call met says why, from the last call whose arguments matched its ``args_regex``
(else that none did): the sub-check that failed and what that call had, e.g.
``expect[0] '^pages update 12\\b': call 'sitectl pages update 12 --title x': stdout_json
request.path equals '/pages/12', found '/pages/13'``. A forbidden call names the call that happened.

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
from coder_eval.criteria.seen import seen_text
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
        return self.args_match(call) and self.mismatch(call) is None

    def args_match(self, call: CliCall) -> bool:
        """Whether the call's arguments match ``args_regex`` (the command pattern)."""
        return search(self.args_regex, shlex.join(call.argv[1:])) is not None

    def mismatch(self, call: CliCall) -> str | None:
        """Past its arguments, the first sub-check ``call`` fails and what it had; None when none does.

        Example: ``"exit_code 1, expected 0"``; ``"stdout_json request.method equals 'POST', found 'GET'"``.
        """
        if self.exit_code is not None and call.exit_code != self.exit_code:
            return f"exit_code {call.exit_code}, expected {self.exit_code}"
        if not self.stdout_json:
            return None
        try:
            document: Any = json.loads(call.stdout)
        except (ValueError, RecursionError):  # not JSON, an integer past the int-string limit, too deep
            return f"stdout_json: stdout is not JSON: {seen_text(call.stdout, 80)}"
        for assertion in self.stdout_json:
            found = assertion.mismatch(document)
            if found is not None:
                return f"stdout_json {assertion.name}, {found}"
        return None


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
        failed: list[str] = []
        cursor = 0
        for i, pattern in enumerate(self.expect):
            start = cursor if self.ordered else 0
            hit = next((j for j in range(start, len(calls)) if pattern.matches(calls[j])), None)
            name = f"expect[{i}] {pattern.args_regex!r}"
            checks[name] = hit is not None
            if hit is not None:
                cursor = hit + 1
            else:
                failed.append(f"{name}: {_why_unmet(pattern, calls, start)}")
        for i, pattern in enumerate(self.forbid):
            name = f"forbid[{i}] {pattern.args_regex!r}"
            made = next((c for c in calls if pattern.matches(c)), None)
            checks[name] = made is None
            failed += [] if made is None else [f"{name}: called {_call_text(made)}"]
        if self.min_calls:
            name = f"at least {self.min_calls} calls"
            checks[name] = len(calls) >= self.min_calls
            failed += [] if checks[name] else [f"{name}: {len(calls)} made"]
        details = {"calls": [shlex.join(c.argv) for c in calls][:50], "failed": failed}
        return Verdict(score=fraction(checks), details=details)


def _why_unmet(pattern: CallPattern, calls: list[CliCall], start: int) -> str:
    """Why no call met an expectation: the last call whose arguments matched and the sub-check it
    failed; else that no call's arguments matched (or none after the previous expectation's)."""
    candidates = [c for c in calls[start:] if pattern.args_match(c)]
    if not candidates:
        earlier = start and any(pattern.matches(c) for c in calls[:start])
        return (
            "only before the previous expected call (ordered)" if earlier else "no call's arguments matched"
        )
    call = candidates[-1]
    return f"call {_call_text(call)}: {pattern.mismatch(call)}"


def _call_text(call: CliCall) -> str:
    return seen_text(shlex.join(call.argv), 120)
