"""Criterion kinds, one module each, listed in one literal table.

``Criterion`` is the discriminated union (on ``type``) used by task files.
"""

from __future__ import annotations

from typing import Annotated, Union

from pydantic import Field

from coder_eval.criteria.base import CriterionSpec, GradingContext, HiddenMaterial, Verdict
from coder_eval.criteria.file_check import FileCheck, FileContains, FileMatchesRegex
from coder_eval.criteria.file_exists import FileExists
from coder_eval.criteria.file_unchanged import FileUnchanged
from coder_eval.criteria.hidden_tests import HiddenTestsCriterion
from coder_eval.criteria.json_check import JsonCheck
from coder_eval.criteria.recorded_calls import RecordedCalls
from coder_eval.criteria.run_command import RunCommand

CRITERIA: dict[str, type[CriterionSpec]] = {
    "file_exists": FileExists,
    "file_contains": FileContains,
    "file_check": FileCheck,
    "file_matches_regex": FileMatchesRegex,
    "json_check": JsonCheck,
    "run_command": RunCommand,
    "hidden_tests": HiddenTestsCriterion,
    "file_unchanged": FileUnchanged,
    "recorded_calls": RecordedCalls,
}

Criterion = Annotated[Union[tuple(CRITERIA.values())], Field(discriminator="type")]  # type: ignore[valid-type]  # noqa: UP007

__all__ = ["CRITERIA", "Criterion", "CriterionSpec", "GradingContext", "HiddenMaterial", "Verdict"]
