"""How Inspect AI scores a sample -> an episode's outcome: the score values as floats, the verdict.

A sample that Inspect invalidated, or that errored, or that nothing scored, is ``invalid`` (the
agent was not measured); otherwise it passes when every score value reads as 1 or more (``C``,
``true``, ``yes``, 1), as Inspect's ``value_to_float`` reads them. A limit the sample hit sets the
status.

Example::

    scores = read_scores(sample, {"match": "match"})
    sample_verdict(sample, scores).outcome     # 'pass'
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from inspect_ai.log import EvalSample

_NAN = float("nan")

LIMIT_STATUS = {
    "time": "timeout",
    "working": "timeout",
    "message": "max_turns",
    "turn": "max_turns",
    "token": "budget_exceeded",
    "cost": "budget_exceeded",
}
"""Inspect sample limit type -> episode status; other limits (context, operator, custom) keep
``completed`` and are named in ``error``."""


class ScoreRead(NamedTuple):
    """One score value of a sample, as a float where Inspect's ``value_to_float`` reads one."""

    name: str
    scorer: str
    value: float | None
    details: dict[str, Any]


class Verdict(NamedTuple):
    """An episode's outcome, status, pass flag, score and error, read from a sample."""

    outcome: str
    status: str
    passed: bool | None
    score: float
    error: str | None


def sample_verdict(sample: EvalSample, scores: list[ScoreRead]) -> Verdict:
    """Invalid when Inspect invalidated the sample, it errored, or nothing scored it; else pass when
    every score value reads as 1 or more."""
    if sample.invalidation is not None:
        why = sample.invalidation.reason or "no reason given"
        return Verdict(
            "invalid", "infra_error", None, _NAN, f"invalidated by {sample.invalidation.author}: {why}"
        )
    if sample.error is not None:
        return Verdict("invalid", "agent_error", None, _NAN, sample.error.message)
    values = [s.value for s in scores if s.value is not None]
    if not values:
        return Verdict("invalid", "grader_error", None, _NAN, "the sample has no readable score")
    passed = all(v >= 1.0 for v in values)
    status, error = "completed", None
    if sample.limit is not None:
        status = LIMIT_STATUS.get(sample.limit.type, "completed")
        error = f"{sample.limit.type} limit {sample.limit.limit:g} reached" + (
            f": {sample.limit.reason}" if sample.limit.reason else ""
        )
    return Verdict("pass" if passed else "fail", status, passed, sum(values) / len(values), error)


def read_scores(sample: EvalSample, scorers: Mapping[str, str]) -> list[ScoreRead]:
    """Each score value; a dict or list value gives one entry per item (``name/key``)."""
    from inspect_ai.scorer import value_to_float

    to_float = value_to_float()
    reads = []
    for name, score in (sample.scores or {}).items():
        context = {"answer": score.answer, "explanation": score.explanation, "metadata": score.metadata}
        details = {key: value for key, value in context.items() if value is not None}
        for part, raw in score_parts(name, score.value):
            value = None if raw is None else to_float(raw)
            reads.append(ScoreRead(part, scorers.get(name, name), value, {"value": raw, **details}))
    return reads


def score_parts(name: str, value: Any) -> list[tuple[str, Any]]:
    """``score_parts("s", {"a": 1})`` -> ``[("s/a", 1)]``; a scalar is one part named ``name``."""
    if isinstance(value, Mapping):
        return [(f"{name}/{key}", item) for key, item in value.items()]
    if isinstance(value, list | tuple):
        return [(f"{name}/{index}", item) for index, item in enumerate(value)]
    return [(name, value)]
