"""Grading: every criterion's verdict on a finished episode, the episode score, and its outcome.

Example::

    results = await evaluate_criteria(task, sandbox, prepared, events, final_message, seed)
    episode_score(results)                  # weighted mean of criterion scores
    episode_outcome(agent_result, results)  # ("pass", "completed", None)
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from coder_eval.agents import AgentResult
from coder_eval.criteria import CriterionSpec, GradingContext, HiddenMaterial
from coder_eval.sandbox.base import Sandbox
from coder_eval.task import TaskSpec
from coder_eval.trajectory import CriterionResult, Event, Outcome, Status


async def evaluate_criteria(
    task: TaskSpec,
    sandbox: Sandbox,
    prepared: Sequence[Any],
    events: Sequence[Event],
    final_message: str | None,
    seed: int,
) -> list[CriterionResult]:
    """Every criterion's verdict on the sandbox as it is now; a crashing grader is recorded, not raised."""
    hidden = HiddenMaterial(
        Path(task.hidden_tests.path) if task.hidden_tests else None,
        task.hidden_tests.mount_point if task.hidden_tests else "hidden_tests",
    )
    shim_logs = {shim.name: shim.log_path for shim in task.sandbox.shims}
    results = []
    for criterion, criterion_id, state in zip(
        task.success_criteria, task.criterion_ids(), prepared, strict=True
    ):
        ctx = GradingContext(sandbox, events, task.source_dir, hidden, state, seed, final_message, shim_logs)
        results.append(await _verdict(criterion, criterion_id, ctx))
    return results


async def _verdict(criterion: CriterionSpec, criterion_id: str, ctx: GradingContext) -> CriterionResult:
    base: dict[str, Any] = {
        "criterion_id": criterion_id,
        "kind": criterion.type,
        "description": criterion.description,
        "gating": criterion.is_gating,
        "weight": criterion.weight,
    }
    try:
        verdict = await criterion.evaluate(ctx)
    except Exception as exc:  # a crashing grader is recorded, never fatal to the batch
        return CriterionResult(**base, score=0.0, passed=False, error=f"{type(exc).__name__}: {exc}")
    score = min(1.0, max(0.0, verdict.score))
    passed = verdict.passed if verdict.passed is not None else score >= criterion.pass_threshold
    return CriterionResult(
        **base,
        score=score,
        passed=passed,
        details=verdict.details,
        observed_label=verdict.observed_label,
        expected_label=verdict.expected_label,
    )


def episode_score(results: Sequence[CriterionResult]) -> float:
    """The weighted mean of criterion scores (the plain mean when every weight is 0; 0 with none)."""
    total = sum(r.weight for r in results)
    if total:
        return sum(r.score * r.weight for r in results) / total
    return sum(r.score for r in results) / len(results) if results else 0.0


def episode_outcome(
    result: AgentResult, results: Sequence[CriterionResult]
) -> tuple[Outcome, Status, str | None]:
    """Three-valued outcome: invalid (not measured), else pass iff every gating criterion passed."""
    if result.invalid:
        return "invalid", result.status if result.status != "completed" else "agent_error", result.error
    broken = [r for r in results if r.gating and r.error]
    if broken:
        reason = f"gating criterion {broken[0].criterion_id!r} failed: {broken[0].error}"
        return "invalid", "grader_error", reason
    if result.status in ("timeout", "budget_exceeded"):
        return "fail", result.status, result.error
    passed = all(r.passed for r in results if r.gating)
    return ("pass" if passed else "fail"), result.status, result.error
