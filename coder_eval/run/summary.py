"""What a run did, per variant, and why each episode that did not pass did not: read from its directory.

Example::

    summary = summarize_run(RunDir.open(Path("runs/latest")))
    [(v.variant_id, v.outcomes["pass"]) for v in summary.variants]   # [('baseline', 7), ...]
    summary.not_passed[0].reason     # 'hidden-tests (the hidden unit tests pass): exit 1: 2 failed, 2 passed'
    summary.measured                 # False when every finished episode is invalid (nothing was measured)

Counts only, no statistics: the comparison of variants is the analysis library's. This is what the
console prints at the end of ``coder-eval run`` and of ``coder-eval show --follow`` on a run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from coder_eval.errors import TrajectoryError
from coder_eval.failures import episode_reason
from coder_eval.run_dir import RunDir
from coder_eval.trajectory import CriterionResult, EpisodeEnd, read_trajectory


@dataclass
class VariantTotals:
    """One variant's finished episodes: outcomes, spend, tokens and wall time."""

    variant_id: str
    outcomes: dict[str, int] = field(default_factory=lambda: {"pass": 0, "fail": 0, "invalid": 0})
    cost_usd: float = 0.0
    unpriced: int = 0
    """Episodes whose cost is unknown (a model without a price)."""
    tokens: int = 0
    seconds: float = 0.0
    """Wall time of the episodes, summed."""
    unverified: int = 0
    """Episodes whose record is the agent CLI's own (no harness vantage point on its model, or a
    sandbox that is no boundary): their tool calls, usage and cost were not checked at the endpoint."""

    @property
    def finished(self) -> int:
        return sum(self.outcomes.values())

    def add(self, end: EpisodeEnd) -> None:
        self.outcomes[end.outcome] += 1
        self.unpriced += end.cost_usd is None
        self.cost_usd += end.cost_usd or 0.0
        self.tokens += end.usage.total
        self.seconds += end.timings.total_s
        self.unverified += end.record is not None and not end.record.verified


class NotPassed(NamedTuple):
    """A finished episode that did not pass, and why (``coder_eval.failures.episode_reason``)."""

    episode_id: str
    variant_id: str
    outcome: str
    reason: str


@dataclass(frozen=True)
class RunSummary:
    """A run's totals per variant (in the run's order) and its episodes that did not pass."""

    variants: list[VariantTotals]
    not_passed: list[NotPassed]
    unfinished: int
    """Planned episodes without a complete trajectory (not started, interrupted, unreadable)."""

    @property
    def finished(self) -> int:
        return sum(v.finished for v in self.variants)

    @property
    def outcomes(self) -> dict[str, int]:
        return {k: sum(v.outcomes[k] for v in self.variants) for k in ("pass", "fail", "invalid")}

    @property
    def unverified(self) -> int:
        """Finished episodes whose record was not checked at a harness point (see ``VariantTotals``)."""
        return sum(v.unverified for v in self.variants)

    @property
    def measured(self) -> bool:
        """Some finished episode was graded (``pass`` or ``fail``); False when all are ``invalid``.

        A run with no finished episode at all (a budget that let none start) counts as measured:
        nothing there says the agent could not be measured."""
        return self.finished == 0 or self.outcomes["invalid"] < self.finished


def summarize_run(run: RunDir) -> RunSummary:
    """Read every planned episode's trajectory in ``run`` (its manifest says which) once."""
    manifest = run.read_manifest()
    totals = {v: VariantTotals(v) for v in manifest.variants}
    not_passed, unfinished = [], 0
    for planned in manifest.episodes:
        read = _finished(run, planned.episode_id)
        if read is None:
            unfinished += 1
            continue
        end, verdicts = read
        totals.setdefault(planned.variant_id, VariantTotals(planned.variant_id)).add(end)
        if end.outcome != "pass":
            reason = episode_reason(end, verdicts)
            not_passed.append(NotPassed(planned.episode_id, planned.variant_id, end.outcome, reason))
    return RunSummary(list(totals.values()), not_passed, unfinished)


def _finished(run: RunDir, episode_id: str) -> tuple[EpisodeEnd, list[CriterionResult]] | None:
    path = run.episode_path(episode_id)
    if not path.is_file():
        return None
    try:
        trajectory = read_trajectory(path)
    except TrajectoryError:
        return None
    if not trajectory.complete or trajectory.end is None:
        return None
    return trajectory.end, [e for e in trajectory.events if isinstance(e, CriterionResult)]
