"""``hidden_tests``: tests the agent never saw, run in the verifier against the agent's final workspace.

The task's ``hidden_tests.path`` is at its ``mount_point`` in the verifier (whatever the agent had left
there is replaced), and ``command`` runs from the workspace root with the verifier's trusted toolchain.

When the command runs pytest, the verdict is what pytest itself counted, read from the report the
verifier's plugin writes outside the workspace at the end of the session, test id by test id: the
ids the same command collected before the agent ran (the pristine workspace with the hidden tests in
place, ``expected_tests.py``) must each pass. A missing id (a module-level skip, a collection error)
counts as not passed, and so does a skip or an ``xfail`` raised by a fixture, the code under test or
the test itself; only a skip by a ``skip``/``skipif`` marker the test carried before the agent ran is
left out. The score is the passed share. Printed output is never parsed for pytest runs, so code
that exits early (``os._exit(0)``) or a program printing ``4 passed`` passes nothing. A command that
runs no pytest is judged on its exit code (and, when its output ends with ``N passed, M failed``,
scored on that line).

Example::

    hidden_tests: {path: fixtures/calc_tests}
    success_criteria:
      - type: hidden_tests
        command: python -m pytest -q hidden_tests
"""

from __future__ import annotations

import re
import shlex
from typing import Literal

from pydantic import Field

from coder_eval.criteria.base import CriterionSpec, GradingContext, Verdict
from coder_eval.criteria.expected_tests import ExpectedTests, graded_verdict, pytest_env
from coder_eval.criteria.grader_faults import check_grader_files
from coder_eval.errors import GraderError, WorkspaceFileError
from coder_eval.sandbox.base import ExecResult

COUNT = re.compile(r"(?<!\d)(\d{1,18}) (passed|failed|errors?)\b")
"""A count in a summary line; a longer run of digits is no count (``int()`` refuses past 4,300)."""
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
    """Run ``command`` in the verifier and judge it: by the expected test ids when it ran pytest
    (``expected_tests.py``; ``ctx.prepared`` holds them), else by its exit code."""
    expected = ctx.prepared if isinstance(ctx.prepared, ExpectedTests) else None
    try:
        env = await pytest_env(ctx.sandbox, expected)
    except WorkspaceFileError as exc:
        return Verdict(score=0.0, passed=False, details={"error": str(exc)})
    result = await ctx.sandbox.exec(command, timeout=timeout, env=env or None)
    reports = await ctx.pytest_reports()
    missing = missing_tool(command, result)
    if missing is not None and not reports:
        raise GraderError(
            f"the grader's tool {missing!r} is not available in the verifier: {result.stderr.strip()[-300:]}"
        )
    if reports or PYTEST_WORD.search(command):
        return graded_verdict(result, reports, expected)
    share = passed_fraction(result.output)
    ok = result.exit_code == 0 and not result.timed_out
    details = {"exit_code": result.exit_code, "timed_out": result.timed_out, "output": result.output[-3000:]}
    return Verdict(score=share if share is not None else float(ok), passed=ok, details=details)


WRAPPERS = frozenset({"env", "exec", "command", "time", "nice", "nohup", "timeout", "xvfb-run"})
"""Programs that run the command after them (``timeout 60 pytest``)."""
RUNNERS = frozenset({"uv", "poetry", "pipenv", "pdm", "hatch", "rye"})
"""Project tools whose ``run`` subcommand runs the command after it (``uv run pytest``)."""


def runs_pytest(command: str) -> bool:
    """Whether the shell ``command`` starts pytest: ``pytest`` / ``py.test`` at a command position
    (after ``&&``, ``;``, ``|``, assignments, ``timeout 60``, ``uv run``), or ``-m pytest``.

    Example: ``runs_pytest("cd app && python -m pytest -q")`` -> True; ``runs_pytest("pip show
    pytest")`` -> False.
    """
    try:
        lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        words = list(lexer)
    except ValueError:
        return False
    start = True
    for before, word in zip(["", *words], words, strict=False):
        if word in ("pytest", "py.test") and before == "-m":
            return True
        if start and word.rsplit("/", 1)[-1] in ("pytest", "py.test"):
            return True
        start = (
            all(c in ";&|()" for c in word)
            or (start and ("=" in word or word in WRAPPERS or word in RUNNERS or word.isdigit()))
            or (before in RUNNERS and word == "run")
        )
    return False


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

    def tests_command(self) -> str | None:
        return self.command if PYTEST_WORD.search(self.command) else None
