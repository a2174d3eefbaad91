"""``pytest``: run pytest on a workspace path; the score is the share of tests that passed.

The tests run in the verifier with its trusted pytest (``hidden_tests.run_tests``): the counts are
what pytest itself recorded, outside the workspace, never its printed output. When the path held
tests before the agent ran, those test ids are what is graded (``expected_tests.py``): a test the
agent removed, skipped or broke counts as not passed, one it added is not graded, and a
``conftest.py`` it added or changed is never loaded as a plugin. The criterion passes
when a session finished, at least one test was collected and the passed share reaches
``pass_threshold`` (0.9, the original format's default): 9 of 10 passing tests pass it.

Example::

    - type: pytest
      description: the agent's tests pass
      path: tests/
"""

from __future__ import annotations

import shlex
from typing import Literal

from pydantic import Field

from coder_eval.criteria.base import GradingContext, OriginalCriterion, Verdict
from coder_eval.criteria.hidden_tests import run_tests
from coder_eval.sandbox.base import SandboxPath


class PytestCriterion(OriginalCriterion):
    type: Literal["pytest"] = "pytest"
    needs = frozenset({"workspace", "commands"})
    path: SandboxPath = Field(default=".", description="File or folder of tests, relative to the workspace.")
    timeout: float = Field(default=300.0, gt=0, description="Seconds before pytest is killed.")

    async def evaluate(self, ctx: GradingContext) -> Verdict:
        verdict = await run_tests(ctx, self.tests_command(), self.timeout)
        if "error" in verdict.details or verdict.details.get("timed_out"):
            return verdict  # no finished session, or nothing collected: a failure, whatever the share
        return Verdict(score=verdict.score, details=verdict.details)

    def tests_command(self) -> str:
        return f"python -m pytest -q {shlex.quote(self.path)}"
