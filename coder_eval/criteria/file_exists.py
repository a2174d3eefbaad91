"""``file_exists``: at least ``min_count`` files match a glob.

Example::

    - type: file_exists
      path: "reports/*.md"
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from coder_eval.criteria.base import GradingContext, OriginalCriterion, Verdict, matching_files
from coder_eval.sandbox.base import SandboxPath


class FileExists(OriginalCriterion):
    type: Literal["file_exists"] = "file_exists"
    path: SandboxPath = Field(description="Glob relative to the sandbox root.")
    min_count: int = Field(default=1, ge=1, description="How many files must match.")

    async def evaluate(self, ctx: GradingContext) -> Verdict:
        found = await matching_files(ctx.sandbox, self.path)
        return Verdict(score=1.0 if len(found) >= self.min_count else 0.0, details={"matched": found[:50]})
