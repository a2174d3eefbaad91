"""``cli_called``: the agent called a recorded CLI with a given verb, arguments and flags.

The calls are the harness's own records of the recorded CLIs (``sandbox.record_cli`` / ``shims``),
never the log file in the workspace: ``log`` (default ``cli_mocks/calls.jsonl``, where ``record_cli``
logs) only says which recorded CLIs to look at, and ``tool`` narrows them to one by name.

A call matches as ``coder_eval.cli_match`` says (the same matcher picks ``record_cli`` responses):
its arguments start with ``verb`` (or one of ``verb_any_of``), its positional arguments after the verb
start with ``positional``, and every entry of ``flags`` holds (``equals``, ``contains``,
``matches_regex``, ``any_of``, ``present``, ``absent``, with ``aliases``). The criterion passes
(score 1) when the number of matching calls lies in ``[min_count, max_count]``.

Example::

    sandbox:
      record_cli: [{tool: deployctl, exit_code: 0, stdout: "ok\\n"}]
    success_criteria:
      - type: cli_called
        description: deployed web 1.4.2 to staging, never with --force
        tool: deployctl
        verb: deploy
        positional: [web]
        flags:
          env: {equals: staging, aliases: [e]}
          version: {matches_regex: "^1\\\\.4\\\\.2$"}
          force: {absent: true}
"""

from __future__ import annotations

import shlex
from typing import Any, Literal

from pydantic import Field, model_validator

from coder_eval.cli_match import CliMatch
from coder_eval.criteria.base import CriterionSpec, GradingContext, TaskFacts, Verdict
from coder_eval.criteria.seen import seen_of, seen_text
from coder_eval.criteria.transcript import DETAIL_LIMIT
from coder_eval.errors import GraderError
from coder_eval.patterns import bounded
from coder_eval.trajectory import CliCall

DEFAULT_LOG = "cli_mocks/calls.jsonl"


class CliCalled(CriterionSpec, CliMatch):
    needs = frozenset({"trajectory"})
    type: Literal["cli_called"] = "cli_called"
    tool: str | None = Field(default=None, description="Only this recorded CLI (its name).")
    log: str = Field(default=DEFAULT_LOG, description="The recorded CLIs that log here (record_cli's log).")
    min_count: int = Field(default=1, ge=0, description="At least this many matching calls.")
    max_count: int | None = Field(default=None, ge=0, description="At most this many (null: no limit).")

    @model_validator(mode="after")
    def _consistent(self) -> CliCalled:
        if self.max_count is not None and self.max_count < self.min_count:
            raise ValueError(f"max_count ({self.max_count}) is below min_count ({self.min_count})")
        return self

    def recorder_names(self, recorders: dict[str, str | None]) -> list[str]:
        """The recorded CLIs this criterion reads: ``tool``, else those logging to ``log``."""
        if self.tool is not None:
            return [self.tool] if self.tool in recorders else []
        return [name for name, log in recorders.items() if log == self.log]

    def task_problem(self, task: TaskFacts) -> str | None:
        if self.recorder_names(dict(task.recorders)):
            return None
        wanted = self.tool or f"logging to {self.log!r}"
        return (
            f"cli_called reads the recorded CLI {wanted}, but sandbox.record_cli and shims declare "
            f"{sorted(task.recorders) or 'none'}"
        )

    async def evaluate(self, ctx: GradingContext) -> Verdict:
        names = self.recorder_names(dict(ctx.recorders))
        if not names:
            wanted = f"named {self.tool!r}" if self.tool else f"logging to {self.log!r}"
            raise GraderError(f"no recorded CLI {wanted}; declared: {', '.join(ctx.recorders) or 'none'}")
        return await bounded(self._verdict_on, ctx.cli_calls(names))

    def _verdict_on(self, calls: list[CliCall]) -> Verdict:
        matching = [c for c in calls if self.matches(c.argv[1:])]
        count = len(matching)
        ok = count >= self.min_count and (self.max_count is None or count <= self.max_count)
        details: dict[str, Any] = {
            "count": count,
            "expected": f"{self.min_count}..{'∞' if self.max_count is None else self.max_count}",
            "matching": [shlex.join(c.argv) for c in matching][:DETAIL_LIMIT],
            "calls": [shlex.join(c.argv) for c in calls][:DETAIL_LIMIT],
        }
        if not ok:
            details |= self._why_not(calls, matching)
        return Verdict(score=1.0 if ok else 0.0, details=details)

    def _why_not(self, calls: list[CliCall], matching: list[CliCall]) -> dict[str, Any]:
        """Too few matching calls: the call that came closest and the part of it that did not match;
        too many: the matching calls."""
        count = len(matching)
        if count > (self.max_count if self.max_count is not None else count):
            failed = f"{count} matching calls, at most {self.max_count} expected"
            return {
                "failed": [failed],
                **seen_of("the matching calls", "\n".join(shlex.join(c.argv) for c in matching)),
            }
        failed = f"{count} matching calls, at least {self.min_count} expected"
        misses = [(m, c) for c in calls if (m := self.mismatch(c.argv[1:])) is not None]
        if not misses:
            return {"failed": [failed], "seen_in": "the recorded calls", "seen": "no call"}
        miss, call = max(misses, key=lambda pair: pair[0].stage)  # the first of the closest
        said = f"{failed}; nearest call {seen_text(shlex.join(call.argv), 120)}: {miss.why}"
        return {"failed": [said]}
