"""``message_matches``: a regex over what the agent said.

``scope: final`` (default) searches the agent's final answer: the final message the agent reported,
else the text of its last assistant message. ``scope: transcript`` searches the text of every
assistant message. With ``should_match: false`` the pattern must not appear: use it to catch
over-claiming ("all tests pass" when they don't), next to a criterion that checks the claim.

Example::

    - type: message_matches
      description: names the root cause
      pattern: "off[- ]by[- ]one"
      flags: {ignorecase: true}

    - type: message_matches
      description: does not claim success
      scope: transcript
      pattern: "all (\\d+ )?tests (now )?pass"
      should_match: false
      flags: {ignorecase: true}
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from coder_eval.criteria.base import CriterionSpec, GradingContext, Regex, Verdict
from coder_eval.criteria.seen import seen_of
from coder_eval.criteria.transcript import assistant_texts, final_text
from coder_eval.patterns import bounded, search

if TYPE_CHECKING:
    import regex

EXCERPT = 300
"""Characters of context kept around a match, or of the searched text's end when nothing matched."""


class RegexFlags(BaseModel):
    """Regex flags, as booleans."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    ignorecase: bool = Field(default=False, description="Case-insensitive matching.")
    multiline: bool = Field(default=False, description="^ and $ match at every line.")
    dotall: bool = Field(default=False, description=". also matches a newline.")

    def value(self) -> re.RegexFlag:
        flags = re.RegexFlag(0)
        if self.ignorecase:
            flags |= re.IGNORECASE
        if self.multiline:
            flags |= re.MULTILINE
        if self.dotall:
            flags |= re.DOTALL
        return flags


class MessageMatches(CriterionSpec):
    needs = frozenset({"trajectory"})
    type: Literal["message_matches"] = "message_matches"
    pattern: Regex = Field(description="Regex searched in the agent's text.")
    scope: Literal["final", "transcript"] = Field(
        default="final", description="final: the final answer; transcript: every assistant message."
    )
    should_match: bool = Field(default=True, description="False: the pattern must not appear.")
    flags: RegexFlags = Field(default_factory=RegexFlags, description="ignorecase, multiline, dotall.")

    async def evaluate(self, ctx: GradingContext) -> Verdict:
        if self.scope == "final":
            texts = [final_text(ctx.events, ctx.final_message)]
        else:
            texts = assistant_texts(ctx.events)
        return await bounded(self._verdict_on, texts)

    def _verdict_on(self, texts: list[str]) -> Verdict:
        details: dict[str, Any] = {"scope": self.scope, "searched_chars": sum(len(t) for t in texts)}
        for number, text in enumerate(texts):
            found = search(self.pattern, text, self.flags.value())
            if found:
                details["match"] = found.group(0)[:EXCERPT]
                details["context"] = _around(text, found)
                if self.scope == "transcript":
                    details["message"] = number
                break
        else:
            details["text_end"] = texts[-1][-EXCERPT:] if texts else ""
        ok = ("match" in details) == self.should_match
        if not ok:
            details["failed"] = [f"pattern {self.pattern!r} {'not found' if self.should_match else 'found'}"]
            where = "the final answer" if self.scope == "final" else "the transcript"
            said = details.get("match")
            details |= (
                seen_of(where, said) if said is not None else seen_of(where, details["text_end"], tail=True)
            )
        return Verdict(score=1.0 if ok else 0.0, details=details)


def _around(text: str, found: regex.Match[str]) -> str:
    margin = EXCERPT // 2
    start, end = max(0, found.start() - margin), min(len(text), found.end() + margin)
    return ("…" if start else "") + text[start:end] + ("…" if end < len(text) else "")
