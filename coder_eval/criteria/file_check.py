"""``file_contains``, ``file_check`` and ``file_matches_regex``: text checks on the files a glob matches.

The matched files are read as one text (in path order). ``includes`` must each appear, ``excludes``
must not, ``patterns`` must each match (``re.search``, multiline). The score is the share of checks
that hold.

Example::

    - type: file_check
      path: src/app.py
      includes: ["def main"]
      excludes: ["TODO"]
      patterns: ["^import logging$"]
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field

from coder_eval.criteria.base import (
    CriterionSpec,
    GradingContext,
    Regex,
    Verdict,
    fraction,
    matching_files,
    read_text,
)
from coder_eval.sandbox.base import SandboxPath


class FileContains(CriterionSpec):
    type: Literal["file_contains"] = "file_contains"
    path: SandboxPath = Field(description="Glob relative to the sandbox root.")
    includes: list[str] = Field(default_factory=list, description="Substrings that must appear.")
    excludes: list[str] = Field(default_factory=list, description="Substrings that must not appear.")
    case_sensitive: bool = Field(default=True, description="Compare case-sensitively.")

    def _checks(self, text: str) -> dict[str, bool]:
        folded = text if self.case_sensitive else text.lower()

        def norm(s: str) -> str:
            return s if self.case_sensitive else s.lower()

        checks = {f"includes {s!r}": norm(s) in folded for s in self.includes}
        checks.update({f"excludes {s!r}": norm(s) not in folded for s in self.excludes})
        return checks

    async def evaluate(self, ctx: GradingContext) -> Verdict:
        files = await matching_files(ctx.sandbox, self.path)
        if not files:
            return Verdict(score=0.0, details={"error": f"no file matches {self.path!r}"})
        checks = self._checks("\n".join([await read_text(ctx.sandbox, p) for p in files]))
        failed = [name for name, ok in checks.items() if not ok]
        return Verdict(score=fraction(checks), details={"files": len(files), "failed": failed})


class FileCheck(FileContains):
    type: Literal["file_check"] = "file_check"  # type: ignore[assignment]
    patterns: list[Regex] = Field(default_factory=list, description="Regexes that must match.")

    def _checks(self, text: str) -> dict[str, bool]:
        checks = super()._checks(text)
        flags = re.MULTILINE | (0 if self.case_sensitive else re.IGNORECASE)
        checks.update({f"pattern {p!r}": re.search(p, text, flags) is not None for p in self.patterns})
        return checks


class FileMatchesRegex(CriterionSpec):
    type: Literal["file_matches_regex"] = "file_matches_regex"
    path: SandboxPath = Field(description="Glob relative to the sandbox root.")
    pattern: Regex = Field(description="Regex searched for (multiline).")
    should_match: bool = Field(default=True, description="False: the pattern must not match.")

    async def evaluate(self, ctx: GradingContext) -> Verdict:
        files = await matching_files(ctx.sandbox, self.path)
        if not files:
            return Verdict(score=0.0, details={"error": f"no file matches {self.path!r}"})
        hits = [p for p in files if re.search(self.pattern, await read_text(ctx.sandbox, p), re.MULTILINE)]
        ok = bool(hits) == self.should_match
        return Verdict(score=1.0 if ok else 0.0, details={"matched_in": hits})
