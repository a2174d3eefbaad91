"""``file_contains``, ``file_check`` and ``file_matches_regex``: text checks on the files a glob matches.

The matched files are read as one text (in path order). ``includes`` must each appear, ``excludes``
must not, ``patterns`` must each match (``re.search``; a plain string is searched multiline, a
``{pattern, must_match, flags}`` entry with exactly its flags, and must not match when ``must_match``
is false). The score is the share of checks that hold; it passes at ``pass_threshold`` (0.9). A
failed check records what it read (``seen``, bounded and escaped), so its reason reads
``patterns[0] '^3$' not found in out.txt: '25\n'``.

Example::

    - type: file_check
      path: src/app.py
      includes: ["def main"]
      excludes: ["TODO"]
      patterns:
        - "^import logging$"
        - {pattern: "print\\(", must_match: false}
        - {pattern: "^class app", flags: [IGNORECASE, MULTILINE]}

``file_matches_regex`` takes ``must_match`` (``should_match`` is the same field) and ``flags``.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field

from coder_eval.criteria.base import (
    GradingContext,
    OriginalCriterion,
    Regex,
    Verdict,
    fraction,
    matching_files,
    read_texts,
)
from coder_eval.criteria.flags import Flags, flag_value
from coder_eval.criteria.seen import files_named, seen_of
from coder_eval.patterns import bounded, search
from coder_eval.sandbox.base import SandboxPath


class PatternCheck(BaseModel):
    """One regex of ``file_check``: it must match (or, with ``must_match: false``, must not)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    pattern: Regex = Field(description="Regex searched in the text.")
    must_match: bool = Field(default=True, description="False: the pattern must not match.")
    flags: Flags = Field(default_factory=list, description="Regex flags (IGNORECASE, MULTILINE ...).")

    def holds(self, text: str, case_sensitive: bool) -> bool:
        flags = flag_value(self.flags) | (0 if case_sensitive else re.IGNORECASE)
        return (search(self.pattern, text, flags) is not None) == self.must_match


class FileContains(OriginalCriterion):
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

    @staticmethod
    def _failure(name: str) -> str:
        """How a failed check reads: an inclusion or a pattern ``not found``, the rest ``found``."""
        wanted = name.startswith("includes") or (name.startswith("patterns") and not name.endswith("absent"))
        return f"{name.removesuffix(' absent')} {'not found' if wanted else 'found'}"

    async def evaluate(self, ctx: GradingContext) -> Verdict:
        files = await matching_files(ctx.sandbox, self.path)
        if not files:
            return Verdict(score=0.0, details={"error": f"no file matches {self.path!r}"})
        text = "\n".join(await read_texts(ctx.sandbox, files))
        checks = await bounded(self._checks, text)
        failed = [self._failure(name) for name, ok in checks.items() if not ok]
        details: dict[str, object] = {"files": len(files), "failed": failed}
        if failed:
            details |= seen_of(files_named(files), text)
        return Verdict(score=fraction(checks), details=details)


class FileCheck(FileContains):
    type: Literal["file_check"] = "file_check"  # type: ignore[assignment]
    patterns: list[Regex | PatternCheck] = Field(
        default_factory=list,
        description="Regexes that must match (multiline), or {pattern, must_match, flags} entries.",
    )

    def _checks(self, text: str) -> dict[str, bool]:
        checks = super()._checks(text)
        for i, p in enumerate(self.patterns):
            if isinstance(p, PatternCheck):
                name = f"patterns[{i}] {p.pattern!r}" + ("" if p.must_match else " absent")
                checks[name] = p.holds(text, self.case_sensitive)
            else:
                flags = re.MULTILINE | (0 if self.case_sensitive else re.IGNORECASE)
                checks[f"patterns[{i}] {p!r}"] = search(p, text, flags) is not None
        return checks


class FileMatchesRegex(OriginalCriterion):
    type: Literal["file_matches_regex"] = "file_matches_regex"
    path: SandboxPath = Field(description="Glob relative to the sandbox root.")
    pattern: Regex = Field(description="Regex searched for (multiline unless flags are given).")
    must_match: bool = Field(
        default=True,
        validation_alias=AliasChoices("must_match", "should_match"),
        description="False: the pattern must not match (should_match is the same field).",
    )
    flags: Flags | None = Field(
        default=None, description="Regex flags, used exactly as given (default: MULTILINE)."
    )

    async def evaluate(self, ctx: GradingContext) -> Verdict:
        files = await matching_files(ctx.sandbox, self.path)
        if not files:
            return Verdict(score=0.0, details={"error": f"no file matches {self.path!r}"})
        flags = re.MULTILINE if self.flags is None else flag_value(self.flags)
        texts = dict(zip(files, await read_texts(ctx.sandbox, files), strict=True))
        hits = await bounded(lambda: [p for p, text in texts.items() if search(self.pattern, text, flags)])
        ok = bool(hits) == self.must_match
        details: dict[str, object] = {"matched_in": hits}
        if not ok:
            details["failed"] = [f"pattern {self.pattern!r} {'not found' if self.must_match else 'found'}"]
            where = hits[0] if hits else files[0]
            details |= seen_of(files_named([where, *(f for f in files if f != where)]), texts[where])
        return Verdict(score=1.0 if ok else 0.0, details=details)
