"""The criterion seam: a pure function of (sandbox after the run, trajectory) -> score, details.

Each criterion kind is a pydantic model (its YAML fields) with an ``evaluate`` method.

Example (YAML)::

    success_criteria:
      - type: file_exists
        path: "out/*.txt"
        description: the report was written
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import jmespath
from jmespath.exceptions import JMESPathError
from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from coder_eval.sandbox.base import Sandbox
from coder_eval.trajectory import Event


def check_regex(pattern: str) -> str:
    """Validate a regular expression at load time, so a typo fails before any sandbox exists."""
    try:
        re.compile(pattern)
    except re.error as exc:
        raise ValueError(f"invalid regex {pattern!r}: {exc}") from exc
    return pattern


Regex = Annotated[str, AfterValidator(check_regex)]
"""A string that must compile as a Python regular expression."""


def check_jmespath(expression: str) -> str:
    """Validate a JMESPath expression at load time."""
    try:
        jmespath.compile(expression)
    except JMESPathError as exc:
        raise ValueError(f"invalid JMESPath {expression!r}: {exc}") from exc
    return expression


JmesPath = Annotated[str, AfterValidator(check_jmespath)]
"""A string that must compile as a JMESPath expression."""


@dataclass(frozen=True)
class HiddenMaterial:
    """Material that never enters the sandbox while the agent runs."""

    hidden_tests: Path | None = None
    mount_point: str = "hidden_tests"


@dataclass(frozen=True)
class GradingContext:
    """What a criterion may look at: the finished sandbox, the trajectory, and its own prepared state."""

    sandbox: Sandbox
    events: Sequence[Event]
    task_dir: Path
    hidden: HiddenMaterial = field(default_factory=HiddenMaterial)
    prepared: Any = None
    seed: int = 0
    final_message: str | None = None
    shim_logs: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Verdict:
    """A grader's result; ``passed`` defaults to ``score >= pass_threshold``."""

    score: float
    details: dict[str, Any] = field(default_factory=dict)
    passed: bool | None = None
    observed_label: str | None = None
    expected_label: str | None = None


class CriterionSpec(BaseModel):
    """Fields every criterion has."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    type: str = Field(description="Criterion kind.")
    id: str | None = Field(default=None, description="Stable id (default: '<index>-<type>').")
    description: str = Field(default="", description="What is checked, in words.")
    weight: float = Field(default=1.0, ge=0, description="Weight in the episode score; 0 = informational.")
    pass_threshold: float = Field(default=1.0, ge=0, le=1, description="Score needed to pass.")
    gating: bool | None = Field(
        default=None, description="Must pass for the episode to pass (default: weight > 0)."
    )

    @property
    def is_gating(self) -> bool:
        return self.weight > 0 if self.gating is None else self.gating

    async def prepare(self, sandbox: Sandbox) -> Any:
        """Runs after set-up, before the agent (e.g. hash protected files). Default: nothing."""
        return None

    async def evaluate(self, ctx: GradingContext) -> Verdict:
        """Grade the finished episode."""
        raise NotImplementedError


def file_glob(pattern: str) -> str:
    """``dir/**`` means every file below ``dir`` (pathlib alone would match only directories)."""
    return pattern + "/*" if pattern == "**" or pattern.endswith("/**") else pattern


def matching_files(root: Path, pattern: str) -> list[Path]:
    """Files under the sandbox ``root`` matching a relative glob, sorted; ``dir/**`` means every file
    below ``dir`` (pathlib alone would match only directories)."""
    resolved = root.resolve()
    pattern = file_glob(pattern)
    return sorted(p for p in resolved.glob(pattern) if p.is_file() and p.resolve().is_relative_to(resolved))


def read_text(path: Path, limit: int = 5_000_000) -> str:
    """A sandbox file as text (undecodable bytes replaced), at most ``limit`` bytes."""
    with path.open("rb") as handle:
        return handle.read(limit).decode("utf-8", errors="replace")


def fraction(checks: dict[str, bool]) -> float:
    """Share of checks that hold; 1.0 when there are none."""
    return sum(checks.values()) / len(checks) if checks else 1.0
