"""``hidden_tests``: tests the agent never saw, copied in after it finished, then run.

The task's ``hidden_tests.path`` is copied to its ``mount_point`` and ``command`` runs from the
sandbox root. The criterion passes on exit code 0; when the output ends with ``N passed, M failed``
(or pytest's summary line), the score is the passed fraction. The copy is removed afterwards.

Example::

    hidden_tests: {path: ../fixtures/calc_tests}
    success_criteria:
      - type: hidden_tests
        command: python -m pytest -q hidden_tests
"""

from __future__ import annotations

import re
import shutil
from typing import Literal

from pydantic import Field

from coder_eval.criteria.base import CriterionSpec, GradingContext, Verdict
from coder_eval.errors import GraderError
from coder_eval.sandbox.base import inside

COUNT = re.compile(r"(\d+) (passed|failed|errors?)\b")


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


class HiddenTestsCriterion(CriterionSpec):
    type: Literal["hidden_tests"] = "hidden_tests"
    command: str = Field(description="Command run from the sandbox root once the tests are in place.")
    timeout: float = Field(default=300.0, gt=0, description="Seconds before the command is killed.")

    async def evaluate(self, ctx: GradingContext) -> Verdict:
        source = ctx.hidden.hidden_tests
        if source is None:
            raise GraderError("hidden_tests criterion, but the task has no 'hidden_tests' block")
        mount = inside(ctx.sandbox.root, ctx.hidden.mount_point)
        if mount.exists():
            raise GraderError(
                f"{ctx.hidden.mount_point!r} already exists in the sandbox; choose another mount_point"
            )
        shutil.copytree(source, mount)
        try:
            result = await ctx.sandbox.exec(self.command, timeout=self.timeout)
        finally:
            shutil.rmtree(mount, ignore_errors=True)
        share = passed_fraction(result.output)
        ok = result.exit_code == 0 and not result.timed_out
        details = {
            "exit_code": result.exit_code,
            "timed_out": result.timed_out,
            "output": result.output[-3000:],
        }
        return Verdict(score=share if share is not None else float(ok), passed=ok, details=details)
