"""``hidden_tests``: tests the agent never saw, run in the verifier against the agent's final workspace.

The task's ``hidden_tests.path`` is at its ``mount_point`` in the verifier (whatever the agent had left
there is replaced), and ``command`` runs from the workspace root with the verifier's trusted toolchain.

When the command runs pytest, the verdict is what pytest itself counted, read from the report the
verifier's plugin writes outside the workspace at the end of the session: the criterion passes when
the command exits 0, a session finished, at least one test was collected, and every collected test
passed (tests the author skipped with a marker at set-up do not count; a skip or an ``xfail`` raised
while a test ran counts as not passed). The score is the passed share. Printed output is never parsed
for pytest runs, so code that exits early (``os._exit(0)``) or a program printing ``4 passed`` passes
nothing. A command that runs no pytest is judged on its exit code (and, when its output ends with
``N passed, M failed``, scored on that line).

Example::

    hidden_tests: {path: fixtures/calc_tests}
    success_criteria:
      - type: hidden_tests
        command: python -m pytest -q hidden_tests
"""

from __future__ import annotations

import re
import shlex
from typing import Any, Literal

from pydantic import Field

from coder_eval.criteria.base import CriterionSpec, GradingContext, Verdict
from coder_eval.criteria.grader_faults import check_grader_files
from coder_eval.errors import GraderError
from coder_eval.sandbox.base import ExecResult
from coder_eval.sandbox.toolchain import PytestReport

COUNT = re.compile(r"(\d+) (passed|failed|errors?)\b")
PYTEST_WORD = re.compile(r"\bpytest\b|\bpy\.test\b")
MISSING_TOOL = 127
"""Exit code of a shell whose program was not found."""


def passed_fraction(output: str) -> float | None:
    """The passed share from the last summary line (``3 passed, 1 failed`` / pytest's), else None.

    Example: ``passed_fraction("== 3 passed, 1 failed in 0.2s ==")`` -> ``0.75``
    """
    for line in reversed(output.strip().splitlines()):
        counts = COUNT.findall(line)
        if counts:
            tally = {"passed": 0, "failed": 0, "error": 0}
            for number, word in counts:
                tally["error" if word.startswith("error") else word] += int(number)
            total = sum(tally.values())
            return tally["passed"] / total if total else None
    return None


def pytest_verdict(result: ExecResult, reports: list[PytestReport]) -> Verdict:
    """The verdict of a command that ran pytest, from pytest's own counts."""
    details: dict[str, Any] = {
        "exit_code": result.exit_code,
        "timed_out": result.timed_out,
        "output": result.output[-3000:],
        "sessions": len(reports),
    }
    if not reports:
        details["error"] = "pytest never finished its session (killed, timed out, or the code exited it)"
        return Verdict(score=0.0, passed=False, details=details)
    graded = sum(r.graded for r in reports)
    passed = sum(r.passed for r in reports)
    counts: dict[str, int] = {}
    for report in reports:
        for key, value in report.counts.items():
            counts[key] = counts.get(key, 0) + value
    details.update(collected=sum(r.collected for r in reports), graded=graded, counts=counts)
    ok = result.exit_code == 0 and not result.timed_out and graded > 0 and passed == graded
    if graded == 0:
        details["error"] = "no test was collected"
    return Verdict(score=passed / graded if graded else 0.0, passed=ok, details=details)


def missing_tool(command: str, result: ExecResult) -> str | None:
    """The grader's own program when the verifier does not have it (a harness fault, not the agent's).

    Example: ``missing_tool("pytest -q", ExecResult(127, "", "bash: line 1: pytest: command not
    found", 0.0))`` -> ``"pytest"``.
    """
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    if not words:
        return None
    program = words[0]
    if result.exit_code == MISSING_TOOL and f"{program}: command not found" in result.stderr:
        return program
    module = words[words.index("-m") + 1] if "-m" in words[:-1] else None
    if module is not None and f"No module named {module}" in result.stderr:
        return f"python -m {module}"
    return None


async def run_tests(ctx: GradingContext, command: str, timeout: float) -> Verdict:
    """Run ``command`` in the verifier and judge it (pytest's counts when it ran pytest)."""
    result = await ctx.sandbox.exec(command, timeout=timeout)
    reports = await ctx.pytest_reports()
    missing = missing_tool(command, result)
    if missing is not None and not reports:
        raise GraderError(
            f"the grader's tool {missing!r} is not available in the verifier: {result.stderr.strip()[-300:]}"
        )
    if reports or PYTEST_WORD.search(command):
        return pytest_verdict(result, reports)
    share = passed_fraction(result.output)
    ok = result.exit_code == 0 and not result.timed_out
    details = {"exit_code": result.exit_code, "timed_out": result.timed_out, "output": result.output[-3000:]}
    return Verdict(score=share if share is not None else float(ok), passed=ok, details=details)


class HiddenTestsCriterion(CriterionSpec):
    type: Literal["hidden_tests"] = "hidden_tests"
    needs = frozenset({"workspace", "commands"})
    command: str = Field(description="Command run from the workspace root once the tests are in place.")
    timeout: float = Field(default=300.0, gt=0, description="Seconds before the command is killed.")

    async def evaluate(self, ctx: GradingContext) -> Verdict:
        if ctx.hidden.hidden_tests is None:
            raise GraderError("hidden_tests criterion, but the task has no 'hidden_tests' block")
        await check_grader_files(ctx, self)
        return await run_tests(ctx, self.command, self.timeout)
