"""Runs that continue or stop on what the graders say: ``max_iterations`` and ``stop_early``.

Example (task YAML)::

    max_iterations: 3                # after a failed grading, the failures are the agent's next turn
    success_criteria:
      - type: skill_triggered
        skill_name: pdf
        stop_early: {on_pass: stop, decide_within: 5}   # end the run once this is decided

``GraderFeedback`` is the agent's conversation for ``max_iterations``: after each reply it grades the
workspace as it is (a verifier from a fresh snapshot) and, while gating criteria fail and attempts
remain, answers with what failed. ``early_stop_check`` evaluates the criteria armed with ``stop_early``
on the trajectory so far, at each tool-call boundary; the watch stops the agent once all are decided,
and the episode is then gated on the armed criteria alone (``armed_outcome``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from coder_eval.agents.base import AgentReply, EventSink
from coder_eval.criteria import CriterionSpec, GradingContext, Verdict
from coder_eval.criteria.early_stop import StopEarly
from coder_eval.errors import PatternTimeout
from coder_eval.task import TaskSpec
from coder_eval.trajectory import CriterionResult, Event, Message, ToolCall

Grade = Callable[[str], Awaitable[list[CriterionResult]]]
"""Grades the workspace as it is now, given the agent's latest reply."""


@dataclass
class GraderFeedback:
    """The next turns of a ``max_iterations`` task: the failing criteria, until they pass."""

    grade: Grade
    max_iterations: int
    attempts: int = 1
    history: list[list[CriterionResult]] = field(default_factory=list)

    async def next_message(self, reply: AgentReply, sink: EventSink) -> str | None:
        if self.attempts >= self.max_iterations:
            return None
        results = await self.grade(reply.text)
        self.history.append(results)
        failing = [r for r in results if r.gating and not r.passed]
        if not failing:
            return None
        self.attempts += 1
        text = feedback_text(failing, self.attempts, self.max_iterations)
        sink.write(Message(role="user", content=[{"type": "text", "text": text}], simulated=True))
        return text


def feedback_text(failing: Sequence[CriterionResult], attempt: int, of: int) -> str:
    """What the agent is told after a failed grading (attempt ``attempt`` of ``of`` comes next)."""
    lines = [f"Your work was checked and {len(failing)} check(s) failed (attempt {attempt} of {of} follows):"]
    for result in failing:
        why = (
            result.details.get("error") or result.details.get("failed") or result.details.get("output") or ""
        )
        text = " ".join(str(why).split())[:400]
        name = result.description or result.criterion_id
        lines.append(f"- {name} (score {result.score:.2f})" + (f": {text}" if text else ""))
    lines.append("Fix these and finish again.")
    return "\n".join(lines)


@dataclass(frozen=True)
class Armed:
    """A criterion armed with ``stop_early``: when it counts as decided."""

    criterion: CriterionSpec
    criterion_id: str
    rule: StopEarly


def armed_criteria(task: TaskSpec) -> list[Armed]:
    """The task's criteria armed with ``stop_early`` (none when ``run_limits.stop_early`` is false)."""
    if not task.run_limits.stop_early:
        return []
    found = []
    for criterion, criterion_id in zip(task.success_criteria, task.criterion_ids(), strict=True):
        rule = getattr(criterion, "stop_early", None)
        if isinstance(rule, StopEarly):
            found.append(Armed(criterion, criterion_id, rule))
    return found


def early_stop_check(
    armed: Sequence[Armed], context: Callable[[list[Event]], GradingContext]
) -> Callable[[list[Event]], Awaitable[bool]] | None:
    """The watch's check: True once every armed criterion is decided on the events so far (settled in
    a direction its ``on_pass`` / ``on_fail`` lets stop, or out of ``decide_within`` tool calls)."""
    if not armed:
        return None

    async def decided(events: list[Event]) -> bool:
        ctx = context(events)
        calls = sum(1 for e in events if isinstance(e, ToolCall) and e.parent_tool_use_id is None)
        for item in armed:
            try:
                verdict = await item.criterion.evaluate(ctx)
            except PatternTimeout:  # the agent's text outran the pattern: not passed, as in grading
                verdict = Verdict(score=0.0, passed=False)
            decision = item.criterion.live_decision(verdict)
            within = item.rule.decide_within is not None and calls >= item.rule.decide_within
            if not (item.rule.stops_on(decision) or within):
                return False
        return True

    return decided


def armed_outcome(results: Sequence[CriterionResult], armed: Sequence[Armed], threshold: float) -> bool:
    """An early-stopped episode passes when at least ``threshold`` of its armed criteria passed."""
    ids = {a.criterion_id for a in armed}
    verdicts = [r.passed for r in results if r.criterion_id in ids]
    return bool(verdicts) and sum(verdicts) / len(verdicts) >= threshold
