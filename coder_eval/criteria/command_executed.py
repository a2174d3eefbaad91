"""``command_executed``: the agent ran a matching shell command (or did not, with ``max_count: 0``).

``pattern`` is searched (``re.search``) in each command as the agent ran it: the ``command`` input of
``tool`` calls (``Bash`` by default; a tool without a ``command`` input is matched on its JSON input).
Without ``pattern`` every call of ``tool`` counts (``tool_name: Read`` and no pattern: the agent read
something); ``tool: null`` (the original's ``tool_name: null``) checks the calls of every tool.
Commands that also match ``exclude`` do not count; with ``require_success`` only calls whose result
is not an error and exited 0 count. The criterion passes (score 1) when the count lies in
``[min_count, max_count]``. A pattern also matches the shell-normalised command (quotes removed,
whitespace collapsed: ``git  commit -m "x"`` is also tried as ``git commit -m x``).

The original spelling loads to the same model: ``tool_name`` (``tool``), ``command_pattern``
(``pattern``), ``exclude_pattern`` (``exclude``). ``command_not_executed`` is the same check with
``max_count: 0``. ``stop_early`` (or the older ``stop_when``) arms early stop on it (``early_stop.py``).

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

import shlex
from typing import Any, Literal

from pydantic import AliasChoices, Field, model_validator

from coder_eval.agents.tools import canonical_name
from coder_eval.criteria.base import GradingContext, OriginalCriterion, Regex, Verdict
from coder_eval.criteria.early_stop import Decision, StopEarlyField
from coder_eval.criteria.transcript import DETAIL_LIMIT, ToolStep, tool_steps
from coder_eval.patterns import bounded, search


def normalised(command: str) -> str:
    """The command as the shell reads it: quotes removed, whitespace collapsed.

    Example: ``normalised("git  commit -m 'a b'")`` -> ``"git commit -m a b"``.
    """
    try:
        return " ".join(shlex.split(command))
    except ValueError:  # unbalanced quotes: collapse whitespace only
        return " ".join(command.split())


def _search(pattern: str, command: str) -> bool:
    return search(pattern, command) is not None or search(pattern, normalised(command)) is not None


class CommandExecuted(OriginalCriterion):
    needs = frozenset({"trajectory"})
    type: Literal["command_executed"] = "command_executed"
    tool: str | None = Field(
        default="Bash",
        validation_alias=AliasChoices("tool", "tool_name"),
        description="Tool whose calls are checked (tool_name is the same field); null: every tool.",
    )
    pattern: Regex | None = Field(
        default=None,
        validation_alias=AliasChoices("pattern", "command_pattern"),
        description="Regex searched in each command as run (command_pattern is the same field); "
        "null: every call of the tool counts.",
    )
    exclude: Regex | None = Field(
        default=None,
        validation_alias=AliasChoices("exclude", "exclude_pattern"),
        description="Commands matching this regex do not count (exclude_pattern is the same field).",
    )
    min_count: int = Field(default=1, ge=0, description="At least this many matching commands.")
    max_count: int | None = Field(
        default=None,
        ge=0,
        description="At most this many (null: no limit; 0 with min_count 0: must not run).",
    )
    require_success: bool = Field(
        default=False, description="Count a command only if its result is not an error and it exited 0."
    )
    stop_early: StopEarlyField = Field(default=None, description="Arm early stop on this criterion.")

    @model_validator(mode="after")
    def _range(self) -> CommandExecuted:
        if self.max_count is not None and self.max_count < self.min_count:
            raise ValueError(f"max_count ({self.max_count}) is below min_count ({self.min_count})")
        return self

    @classmethod
    def live_polarities(cls, data: dict[str, Any]) -> frozenset[Decision]:
        """A count can only grow: without ``max_count`` reaching ``min_count`` passes for good, and
        with one, going over it fails for good."""
        max_count = data.get("max_count", cls.model_fields["max_count"].default)
        if max_count is not None:
            return frozenset({"fail"})
        return frozenset({"pass"}) if data.get("min_count", 1) else frozenset()

    def live_decision(self, verdict: Verdict) -> Decision | None:
        count = int(verdict.details.get("count", 0))
        if self.max_count is not None:
            return "fail" if count > self.max_count else None
        return "pass" if count >= self.min_count else None

    def _calls_tool(self, step: ToolStep) -> bool:
        return self.tool is None or step.name == canonical_name(self.tool)

    def _matches(self, step: ToolStep) -> bool:
        if self.pattern is not None and not _search(self.pattern, step.command):
            return False
        return self.exclude is None or not _search(self.exclude, step.command)

    async def evaluate(self, ctx: GradingContext) -> Verdict:
        return await bounded(self._verdict_on, tool_steps(ctx.events))

    def _verdict_on(self, all_steps: list[ToolStep]) -> Verdict:
        steps = [s for s in all_steps if self._calls_tool(s)]
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


class CommandNotExecuted(CommandExecuted):
    """``command_executed`` with ``max_count: 0``: no matching command may run."""

    type: Literal["command_not_executed"] = "command_not_executed"  # type: ignore[assignment]
    min_count: int = Field(default=0, ge=0, le=0, description="Always 0.")
    max_count: int | None = Field(default=0, ge=0, le=0, description="Always 0.")

    @model_validator(mode="before")
    @classmethod
    def _no_range(cls, data: Any) -> Any:
        if isinstance(data, dict):
            given = [name for name in ("min_count", "max_count") if name in data]
            if given:
                raise ValueError(
                    f"{given[0]}: command_not_executed means no matching command at all; "
                    "use command_executed for a range"
                )
        return data


def _with_exit(step: ToolStep) -> str:
    if step.result is None:
        return f"{step.describe()} (no result)"
    return f"{step.describe()} (exit {step.result.exit_code}, is_error {step.result.is_error})"
