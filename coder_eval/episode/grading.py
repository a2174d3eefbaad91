"""Grading: every criterion's verdict on a finished episode, the episode score, and its outcome.

Example::

    results = await evaluate_criteria(task, verifier, prepared, events, final_message, seed)
    episode_score(results)                  # weighted mean of criterion scores
    episode_outcome(agent_result, results)  # ("pass", "completed", None)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from coder_eval.agents import AgentResult
from coder_eval.criteria import PLUGIN_CRITERIA, CriterionSpec, GradingContext, HiddenMaterial
from coder_eval.episode.verifier import Verifier
from coder_eval.errors import WorkspaceFileError
from coder_eval.plugins import crash_text
from coder_eval.task import TaskSpec
from coder_eval.trajectory import CriterionResult, Event, InvalidCause, Outcome, Status


def grading_context(
    task: TaskSpec,
    verifier: Verifier,
    events: Sequence[Event],
    final_message: str | None,
    seed: int,
    agent_paths: Mapping[str, str],
) -> GradingContext:
    """What every criterion of ``task`` sees (its own ``prepared`` state is added per criterion)."""
    hidden = HiddenMaterial(
        Path(task.hidden_tests.path) if task.hidden_tests else None,
        task.hidden_tests.mount_point if task.hidden_tests else "hidden_tests",
        Path(task.reference.directory) if task.reference else None,
    )
    return GradingContext(
        sandbox=verifier.sandbox,
        events=events,
        task_dir=task.source_dir,
        hidden=hidden,
        seed=seed,
        final_message=final_message,
        recorders={r.name: r.log for r in task.sandbox.recorders},
        pytest_reports=verifier.pytest_reports,
        agent_paths=agent_paths,
        dropped=[d.name for d in verifier.dropped],
    )


async def evaluate_criteria(
    task: TaskSpec,
    verifier: Verifier,
    prepared: Sequence[Any],
    events: Sequence[Event],
    final_message: str | None,
    seed: int,
    agent_paths: Mapping[str, str] | None = None,
) -> list[CriterionResult]:
    """Every criterion's verdict on the verifier's workspace; a crashing grader is recorded, not raised."""
    base = grading_context(task, verifier, events, final_message, seed, agent_paths or {})
    results = []
    for criterion, criterion_id, state in zip(
        task.success_criteria, task.criterion_ids(), prepared, strict=True
    ):
        await verifier.clear_reports()
        ctx = dataclasses.replace(base, prepared=state)
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
    except (WorkspaceFileError, RecursionError) as exc:  # what the agent wrote broke the check: its failure
        why = (
            str(exc)
            if isinstance(exc, WorkspaceFileError)
            else "a workspace file is nested too deep to check"
        )
        return CriterionResult(**base, score=0.0, passed=False, details={"error": why})
    except Exception as exc:  # a crashing grader is recorded, never fatal to the batch
        error = f"{type(exc).__name__}: {exc}"
        if criterion.type in PLUGIN_CRITERIA:  # a third party's code: name it and the line that raised
            error = crash_text(f"criterion {criterion.type}", exc)
        return CriterionResult(**base, score=0.0, passed=False, error=error)
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
    """Three-valued outcome: invalid (not measured, on the harness's evidence), else pass iff every
    gating criterion passed and the agent's run ended on its own terms (a timeout, a budget, a limit or
    an agent error is a fail whatever the workspace shows)."""
    if result.invalid:
        return "invalid", result.status if result.status != "completed" else "agent_error", result.error
    broken = [r for r in results if r.gating and r.error]
    if broken:
        reason = f"gating criterion {broken[0].criterion_id!r} failed: {broken[0].error}"
        return "invalid", "grader_error", reason
    if result.status in (
        "timeout",
        "budget_exceeded",
        "resource_limit",
        "agent_error",
    ):  # the agent's failure
        return "fail", result.status, result.error
    passed = all(r.passed for r in results if r.gating)
    return ("pass" if passed else "fail"), result.status, result.error


def invalid_cause(result: AgentResult, status: Status) -> InvalidCause:
    """Who made an invalid episode measure nothing, on the harness's evidence: a gating grader that
    could not run, else what the agent phase established (the provider, as the endpoint served it, or
    the harness); ``harness`` when nothing else says."""
    if status == "grader_error":
        return "grader"
    return result.cause if result.cause in ("provider", "harness") else "harness"
