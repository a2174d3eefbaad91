"""The criteria of one re-graded episode: which run again, which keep their recorded verdict, which
cannot be re-graded; and what the model judges among them cost.

Example::

    split = split_criteria(task, recorded_start, recorded_results, has_snapshot=False)
    split.to_run        # criteria evaluated again (all that need only the trajectory)
    split.kept          # unchanged workspace criteria: the recorded verdict, as it was
    split.missing       # changed or new workspace criteria: an error result saying why

Without a workspace snapshot, a criterion that reads the workspace is never guessed: when it is the
same criterion the run recorded, its recorded verdict is kept (it was measured on that very
workspace); otherwise it gets an ``error`` (a gating one makes the episode ``invalid``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import TypeAdapter, ValidationError

from coder_eval.criteria import Criterion, CriterionSpec
from coder_eval.task import TaskSpec
from coder_eval.trajectory import CriterionResult, EpisodeStart

CRITERION: TypeAdapter[CriterionSpec] = TypeAdapter(Criterion)
NO_SNAPSHOT = (
    "not re-graded: it reads the workspace and the episode kept no workspace snapshot{why}; "
    "it differs from the criterion the run recorded, so that verdict cannot stand in for it"
)


@dataclass(frozen=True)
class CriteriaSplit:
    """The task's criteria (ids made explicit) by how they are re-graded."""

    to_run: list[CriterionSpec]
    kept: dict[str, CriterionResult]
    missing: dict[str, CriterionResult]
    order: list[str]

    def merged(self, ran: Sequence[CriterionResult]) -> list[CriterionResult]:
        """Every verdict in the task's order: those that ran, kept and missing ones."""
        by_id = {**self.kept, **self.missing, **{r.criterion_id: r for r in ran}}
        return [by_id[criterion_id] for criterion_id in self.order]


def split_criteria(
    task: TaskSpec,
    start: EpisodeStart,
    recorded: Sequence[CriterionResult],
    *,
    has_snapshot: bool,
    why_no_snapshot: str = "",
) -> CriteriaSplit:
    """Sort ``task``'s criteria for re-grading (see the module docstring)."""
    recorded_specs = _recorded_specs(start)
    recorded_results = {r.criterion_id: r for r in recorded}
    to_run: list[CriterionSpec] = []
    kept: dict[str, CriterionResult] = {}
    missing: dict[str, CriterionResult] = {}
    ids = task.criterion_ids()
    for criterion, criterion_id in zip(task.success_criteria, ids, strict=True):
        explicit = criterion.model_copy(update={"id": criterion_id})
        if has_snapshot or "workspace" not in criterion.needs:
            to_run.append(explicit)
        elif criterion_id in recorded_results and recorded_specs.get(criterion_id) == explicit.model_dump(
            mode="json"
        ):
            kept[criterion_id] = recorded_results[criterion_id]
        else:
            missing[criterion_id] = _not_regraded(explicit, criterion_id, why_no_snapshot)
    return CriteriaSplit(to_run, kept, missing, ids)


def _recorded_specs(start: EpisodeStart) -> dict[str, dict[str, Any]]:
    """The recorded criteria by id, each read back and dumped whole (as ``split_criteria`` compares);
    one that no longer reads is left out (it differs from any criterion of today)."""
    specs = start.task.get("success_criteria") or []
    found = {}
    for index, spec in enumerate(specs):
        try:
            criterion = CRITERION.validate_python(spec)
        except ValidationError:
            continue
        criterion_id = criterion.id or f"{index}-{criterion.type}"
        found[criterion_id] = criterion.model_copy(update={"id": criterion_id}).model_dump(mode="json")
    return found


def _not_regraded(criterion: CriterionSpec, criterion_id: str, why: str) -> CriterionResult:
    return CriterionResult(
        criterion_id=criterion_id,
        kind=criterion.type,
        description=criterion.description,
        gating=criterion.is_gating,
        weight=criterion.weight,
        score=0.0,
        passed=False,
        error=NO_SNAPSHOT.format(why=f" ({why})" if why else ""),
    )


def needs_workspace(criteria: Sequence[CriterionSpec]) -> bool:
    """Whether any of ``criteria`` reads the workspace (then the pre-agent workspace is rebuilt)."""
    return any("workspace" in criterion.needs for criterion in criteria)


def evaluation_cost(results: Sequence[CriterionResult]) -> float | None:
    """What the model judges' votes in ``results`` cost; None when any vote's price is unknown."""
    total = 0.0
    for result in results:
        votes = result.details.get("votes")
        for vote in votes if isinstance(votes, list) else []:
            cost = vote.get("cost_usd") if isinstance(vote, dict) else None
            if cost is None:
                return None
            total += float(cost)
    return total
