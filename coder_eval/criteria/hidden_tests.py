"""``hidden_tests``: tests the agent never saw, copied in after it finished, then run.

The task's ``hidden_tests.path`` is copied to its ``mount_point`` and ``command`` runs from the
sandbox root. The criterion passes on exit code 0; when the output ends with ``N passed, M failed``
(or pytest's summary line), the score is the passed fraction. The copy is removed afterwards, and
anything the agent had left at the mount point is moved aside for the run and put back.

The command runs the agent's code, so the agent can influence it: with pytest, pass
``--confcutdir=<mount_point>`` so that a ``conftest.py`` the agent put at the sandbox root is not loaded.

Example::

    hidden_tests: {path: ../fixtures/calc_tests}
    success_criteria:
      - type: hidden_tests
        command: python -m pytest -q hidden_tests
"""

from __future__ import annotations

import os
import re
import shutil
import uuid
from pathlib import Path, PurePosixPath
from typing import Literal

from pydantic import Field

from coder_eval.criteria.base import CriterionSpec, GradingContext, Verdict
from coder_eval.errors import GraderError, SandboxError
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


def _set_aside(mount: Path) -> Path | None:
    """Move whatever the agent left at the mount point (a folder, a file, a link) out of the way."""
    if not os.path.lexists(mount):
        return None
    aside = mount.with_name(f"{mount.name}.agent-{uuid.uuid4().hex[:8]}")
    mount.rename(aside)
    return aside


class HiddenTestsCriterion(CriterionSpec):
    type: Literal["hidden_tests"] = "hidden_tests"
    command: str = Field(description="Command run from the sandbox root once the tests are in place.")
    timeout: float = Field(default=300.0, gt=0, description="Seconds before the command is killed.")

    async def evaluate(self, ctx: GradingContext) -> Verdict:
        source = ctx.hidden.hidden_tests
        if source is None:
            raise GraderError("hidden_tests criterion, but the task has no 'hidden_tests' block")
        mount = ctx.sandbox.root / ctx.hidden.mount_point
        try:  # the agent shapes the sandbox: a parent linked outside is its failure, not the grader's
            inside(ctx.sandbox.root, str(PurePosixPath(ctx.hidden.mount_point).parent))
        except SandboxError as exc:
            return Verdict(
                score=0.0, passed=False, details={"error": f"cannot mount the hidden tests: {exc}"}
            )
        aside = _set_aside(mount)
        shutil.copytree(source, mount)
        try:
            result = await ctx.sandbox.exec(self.command, timeout=self.timeout)
        finally:
            shutil.rmtree(mount, ignore_errors=True)
            if aside is not None:
                aside.rename(mount)
        share = passed_fraction(result.output)
        ok = result.exit_code == 0 and not result.timed_out
        details = {
            "exit_code": result.exit_code,
            "timed_out": result.timed_out,
            "output": result.output[-3000:],
        }
        return Verdict(score=share if share is not None else float(ok), passed=ok, details=details)
