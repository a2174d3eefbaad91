"""``run_command``: run a command in the finished sandbox and check its exit code and output.

Example::

    - type: run_command
      command: python -m app --selftest
      expected_exit_code: 0
      stdout_contains: ["OK"]

    - type: run_command
      command: python -m app --version
      expected_stdout: "app 1.2"
      stdout_match: exact                 # or contains, regex

With ``score_from_stdout: true`` the last number printed (clipped to [0, 1]) is the score. A command
that runs pytest (``pytest``, ``python -m pytest`` at a command position) is run the way
``hidden_tests`` runs it: its ``expected_exit_code: 0`` holds only when pytest finished its session
and every test it collected before the agent ran passed, so code that exits early or a
``conftest.py`` the agent added cannot make it hold. The score
is the share of the given checks that hold; the criterion passes at ``pass_threshold`` (0.9).
"""

from __future__ import annotations

import math
import re
from typing import Any, Literal

from pydantic import Field, model_validator

from coder_eval.criteria.base import GradingContext, OriginalCriterion, Regex, Verdict, check_regex, fraction
from coder_eval.criteria.expected_tests import ExpectedTests, graded_verdict, pytest_env
from coder_eval.criteria.grader_faults import check_grader_files
from coder_eval.criteria.hidden_tests import runs_pytest
from coder_eval.criteria.seen import seen_of, seen_text
from coder_eval.errors import WorkspaceFileError
from coder_eval.patterns import bounded, search

NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")


class RunCommand(OriginalCriterion):
    type: Literal["run_command"] = "run_command"
    needs = frozenset({"workspace", "commands"})
    command: str = Field(description="Shell command, run from the sandbox root.")
    timeout: float = Field(default=120.0, gt=0, description="Seconds before the command is killed.")
    expected_exit_code: int | None = Field(default=0, description="Required exit code (null: any).")
    stdout_equals: str | None = Field(default=None, description="stdout (stripped) must equal this.")
    stdout_contains: list[str] = Field(default_factory=list, description="Substrings stdout must contain.")
    stdout_regex: Regex | None = Field(default=None, description="Regex stdout must match.")
    expected_stdout: str | None = Field(default=None, description="What stdout must be, per stdout_match.")
    stdout_match: Literal["exact", "contains", "regex"] = Field(
        default="exact", description="exact: stripped stdout equals; contains: substring; regex: re.search."
    )
    score_from_stdout: bool = Field(default=False, description="Score = last number on stdout, in [0, 1].")

    @model_validator(mode="after")
    def _expected_regex(self) -> RunCommand:
        if self.expected_stdout is not None and self.stdout_match == "regex":
            check_regex(self.expected_stdout)
        return self

    async def evaluate(self, ctx: GradingContext) -> Verdict:
        await check_grader_files(ctx, self)
        expected = ctx.prepared if isinstance(ctx.prepared, ExpectedTests) else None
        try:
            env = await pytest_env(ctx.sandbox, expected) if self.tests_command() else {}
        except WorkspaceFileError as exc:
            return Verdict(score=0.0, details={"error": str(exc)})
        result = await ctx.sandbox.exec(self.command, timeout=self.timeout, env=env or None)
        details: dict[str, Any] = {
            "exit_code": result.exit_code,
            "timed_out": result.timed_out,
            "output": result.output[-2000:],
        }
        if result.timed_out:
            return Verdict(score=0.0, details=details)
        if self.score_from_stdout:
            return _score_from(result.stdout, details)
        checks: dict[str, bool] = {}
        if self.expected_exit_code is not None:
            checks["exit_code"] = result.exit_code == self.expected_exit_code
            if self.tests_command() and self.expected_exit_code == 0:
                tests = graded_verdict(result, await ctx.pytest_reports(), expected)
                checks["exit_code"] = checks["exit_code"] and bool(tests.passed)
                details["tests"] = {
                    k: v for k, v in tests.details.items() if k not in ("output", "exit_code")
                }
        output = await bounded(self._output_checks, result.stdout)
        checks.update(output)
        details["failed"] = [name for name, ok in checks.items() if not ok]
        if not all(output.values()):
            details |= seen_of(f"the stdout of `{seen_text(self.command, 60)[1:-1]}`", result.stdout)
        return Verdict(score=fraction(checks), details=details)

    def _output_checks(self, stdout: str) -> dict[str, bool]:
        checks: dict[str, bool] = {}
        if self.stdout_equals is not None:
            checks[f"stdout_equals {self.stdout_equals!r}"] = stdout.strip() == self.stdout_equals.strip()
        if self.expected_stdout is not None:
            checks[f"expected_stdout ({self.stdout_match}) {self.expected_stdout!r}"] = _stdout_matches(
                stdout, self.expected_stdout, self.stdout_match
            )
        checks.update({f"contains {s!r}": s in stdout for s in self.stdout_contains})
        if self.stdout_regex is not None:
            checks[f"stdout_regex {self.stdout_regex!r}"] = (
                search(self.stdout_regex, stdout, re.MULTILINE) is not None
            )
        return checks

    def tests_command(self) -> str | None:
        """A command that runs pytest is graded as pytest runs are (``hidden_tests.runs_pytest``):
        its exit code counts only when every expected test passed."""
        return self.command if runs_pytest(self.command) else None


def _score_from(stdout: str, details: dict[str, Any]) -> Verdict:
    """The last number printed, clipped to [0, 1]; a non-finite one (``1e999``, an overflow) is none."""
    numbers = NUMBER.findall(stdout)
    value = float(numbers[-1]) if numbers else math.nan
    if not math.isfinite(value):
        error = "no number on stdout" if not numbers else f"{numbers[-1][:40]!r} is not a finite number"
        return Verdict(score=0.0, details={**details, "error": error})
    return Verdict(score=min(1.0, max(0.0, value)), details=details)


def _stdout_matches(stdout: str, expected: str, how: str) -> bool:
    if how == "exact":
        return stdout.strip() == expected.strip()
    if how == "contains":
        return expected in stdout
    return search(expected, stdout, re.MULTILINE) is not None
