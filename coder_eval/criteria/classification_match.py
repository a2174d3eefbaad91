"""``classification_match``: a label the agent wrote to a file, compared with the expected label.

The label is the file's stripped text; with ``jmespath`` the file is JSON and the label is the
expression's value; with ``pattern`` the label is the regex's ``label`` group, else its first group,
else the whole match (applied after ``jmespath`` when both are given). A missing file, a value of
null, empty text or no match is the label ``"none"``; so is an empty or ``none`` ``expected`` (a
dataset row's negative). The criterion records ``observed_label`` and ``expected_label`` and passes
when they are equal, so a dataset yields a confusion matrix (``coder_eval.analysis.stats.classification``).
The original spelling ``expected_label`` / ``allowed_labels`` loads to the same fields.
``labels`` lists the allowed labels: ``expected`` must be one of them, and an observation outside
them is recorded as is and flagged in the details. With ``case_sensitive: false`` both labels are
recorded lower-cased.

Example::

    dataset:
      rows:
        - {id: t1, text: "refund not received", label: billing}
        - {id: t2, text: "app crashes on start", label: bug}
    success_criteria:
      - type: classification_match
        path: answer.json
        jmespath: category
        expected: "${row.label}"
        labels: [billing, bug, other]
        case_sensitive: false
"""

from __future__ import annotations

import json
from typing import Any, Literal, NamedTuple

import jmespath
from jmespath.exceptions import JMESPathError
from pydantic import AliasChoices, Field, model_validator

from coder_eval.criteria.base import (
    GradingContext,
    JmesPath,
    OriginalCriterion,
    Regex,
    Verdict,
    parse_json,
    read_texts,
)
from coder_eval.criteria.seen import seen_of
from coder_eval.errors import PatternTimeout, WorkspaceFileError
from coder_eval.patterns import bounded, search
from coder_eval.sandbox.base import SandboxPath

NONE_LABEL = "none"
"""The label of "nothing": no file, no value, no skill engaged, or a negative expectation."""

LABEL_LIMIT = 200
"""Characters of an observed label kept; a whole essay is not a label."""


def as_label(value: str | None) -> str:
    """A label as recorded: stripped, with empty, null and any-case ``none`` read as ``"none"``.

    Example: ``as_label(" bug\\n")`` -> ``"bug"``; ``as_label("")`` -> ``"none"``; ``as_label("None")``
    -> ``"none"`` (what ``${row.x}`` gives for a null row value).
    """
    text = (value or "").strip()
    return NONE_LABEL if text.lower() == NONE_LABEL or not text else text


class Reading(NamedTuple):
    """What was read from the file: a label (None: nothing) and why nothing was read."""

    label: str | None
    problem: str | None = None


class ClassificationMatch(OriginalCriterion):
    label_field = "expected"
    type: Literal["classification_match"] = "classification_match"
    path: SandboxPath = Field(description="File holding the label, relative to the sandbox root.")
    expected: str | None = Field(
        validation_alias=AliasChoices("expected", "expected_label"),
        description="Expected label (expected_label: the same); empty or null: no label ('none').",
    )
    jmespath: JmesPath | None = Field(default=None, description="JMESPath into the file as JSON.")
    pattern: Regex | None = Field(
        default=None,
        description="Regex extracting the label: its 'label' group, else group 1, else the match.",
    )
    labels: list[str] | None = Field(
        default=None,
        validation_alias=AliasChoices("labels", "allowed_labels"),
        description="Allowed labels (expected must be one); allowed_labels is the same field.",
    )
    case_sensitive: bool = Field(default=True, description="False: compare (and record) lower-cased labels.")

    @model_validator(mode="after")
    def _expected_allowed(self) -> ClassificationMatch:
        expected = self._norm(self.expected)
        allowed = {self._norm(label) for label in self.labels or []}
        if self.labels is not None and expected != NONE_LABEL and expected not in allowed:
            raise ValueError(f"expected label {expected!r} is not in labels {self.labels}")
        return self

    def _norm(self, value: str | None) -> str:
        label = as_label(value)
        return label if self.case_sensitive else label.lower()

    async def evaluate(self, ctx: GradingContext) -> Verdict:
        text: str | None = None
        try:
            text = (await read_texts(ctx.sandbox, [self.path]))[0]
            reading = await bounded(self._read, text)
        except PatternTimeout as exc:
            reading = Reading(None, str(exc))
        except WorkspaceFileError:
            reading = Reading(None, f"{self.path} does not exist")
        observed = self._norm(reading.label)[:LABEL_LIMIT]
        expected = self._norm(self.expected)
        details: dict[str, Any] = {"path": self.path, "observed": observed, "expected": expected}
        if reading.problem:
            details["problem"] = reading.problem
        allowed = {self._norm(label) for label in self.labels or []}
        if self.labels is not None and observed != NONE_LABEL and observed not in allowed:
            details["out_of_labels"] = True
        if observed != expected and text is not None:
            details |= seen_of(self.path, text)  # what the label was read from
        return Verdict(
            score=1.0 if observed == expected else 0.0,
            details=details,
            observed_label=observed,
            expected_label=expected,
        )

    def _read(self, text: str) -> Reading:
        if self.jmespath is not None:
            try:
                document = parse_json(text, self.path)
            except WorkspaceFileError as exc:
                return Reading(None, str(exc))
            try:
                value = jmespath.search(self.jmespath, document)
            except JMESPathError as exc:
                return Reading(None, f"{self.jmespath!r} failed on {self.path}: {exc}")
            if value is None:
                return Reading(None, f"{self.jmespath!r} is null in {self.path}")
            text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        if self.pattern is None:
            return Reading(text)
        found = search(self.pattern, text)
        if found is None:
            return Reading(None, f"pattern {self.pattern!r} does not match: {text[:LABEL_LIMIT]!r}")
        if "label" in found.re.groupindex:
            return Reading(found.group("label"))
        return Reading(found.group(1) if found.re.groups else found.group(0))
