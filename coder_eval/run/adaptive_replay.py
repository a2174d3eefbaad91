"""A run's tasks, in their recorded order, through the confidence sequence: the decision as the
episodes on disk give it. The scheduler replays after every wave, ``--resume`` replays what the run
already has, and regrade replays the regraded verdicts; each reaches the same decision from the
same episodes.

Example::

    state = replay(manifest.adaptive, manifest.episodes, run.finished_episodes())
    state.record.decision, state.record.stopped_at, state.next_index
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from coder_eval.analysis.stats.sequential import capped_log_ratio, confidence_sequence, decisions
from coder_eval.manifest import AdaptiveRecord, PlannedEpisode, SequenceLook, SequencePath
from coder_eval.trajectory import EpisodeEnd

EPISODE_VALUE: dict[str, Callable[[EpisodeEnd], float | None]] = {
    "passed": lambda end: 1.0 if end.outcome == "pass" else 0.0,
    "score": lambda end: min(max(end.score, 0.0), 1.0),
    "cost_usd": lambda end: end.cost_usd,
    "total_tokens": lambda end: float(
        end.usage.input_tokens
        + end.usage.output_tokens
        + end.usage.cache_read_tokens
        + end.usage.cache_creation_tokens
    ),
    "duration_s": lambda end: end.timings.total_s,
    "num_turns": lambda end: float(end.num_turns),
}
"""A decision metric's value on one episode (None: not known, as a cost without a price)."""
BOUNDED = frozenset({"passed", "score"})


@dataclass(frozen=True)
class Replayed:
    """The record with its paths as the episodes give them; ``next_index``: the first task in the
    order that did not count (incomplete, invalid or unmeasured); ``decided``: every metric has
    its decision; ``unmeasured``: the metric a task had no value of."""

    record: AdaptiveRecord
    next_index: int
    decided: bool
    unmeasured: str | None = None


def by_task(episodes: Sequence[PlannedEpisode]) -> dict[str, list[PlannedEpisode]]:
    """The planned episodes of each task (every arm and repeat)."""
    groups: dict[str, list[PlannedEpisode]] = {}
    for episode in episodes:
        groups.setdefault(episode.task_id, []).append(episode)
    return groups


def lost_by_harness(end: EpisodeEnd) -> bool:
    """The harness lost the episode (``invalid_cause: harness``: a lost worker, a sandbox not made): it
    is run again. Every other invalid episode (the provider's, a grader's, the agent's own, or one
    whose cause was not recorded) is its arm's to carry and counts against it."""
    return end.outcome == "invalid" and end.invalid_cause == "harness"


def task_done(planned: Sequence[PlannedEpisode], ends: Mapping[str, EpisodeEnd]) -> bool | None:
    """True when every episode of the task finished and none was lost by the harness, False when
    one was, None while one has not finished."""
    found = [ends.get(p.episode_id) for p in planned]
    if any(end is None for end in found):
        return None
    return not any(end is not None and lost_by_harness(end) for end in found)


def observation(
    metric: str, planned: Sequence[PlannedEpisode], ends: Mapping[str, EpisodeEnd], record: AdaptiveRecord
) -> float | None:
    """The task's observation in [-1, 1]: the candidate's mean minus the baseline's (pass rates,
    scores), or their capped log ratio, +1 when the candidate's is lower (amounts). An invalid episode
    counts against its arm: a failure (0) on pass rates and scores, and on amounts the task at the
    cap against the arm that has one (a tie when both have)."""
    mine = [
        [ends[p.episode_id] for p in planned if p.variant_id == arm]
        for arm in (record.candidate, record.baseline)
    ]
    failed = [any(end.outcome == "invalid" for end in arm) for arm in mine]
    if metric not in BOUNDED and any(failed):
        return float(failed[1]) - float(failed[0])
    means = []
    for arm in mine:
        values = [0.0 if end.outcome == "invalid" else EPISODE_VALUE[metric](end) for end in arm]
        if not values or any(v is None for v in values):
            return None
        means.append(float(np.mean([v for v in values if v is not None])))
    if metric in BOUNDED:
        return means[0] - means[1]
    cap = record.rule.ratio_cap
    return float(capped_log_ratio(np.array([means[0]]), np.array([means[1]]), cap)[0])


def replay(
    record: AdaptiveRecord, episodes: Sequence[PlannedEpisode], ends: Mapping[str, EpisodeEnd]
) -> Replayed:
    """Count the tasks of the order, up to the cap, while each is complete; stop at the first look
    where every decision metric has its decision."""
    groups, metrics = by_task(episodes), record.rule.metrics
    values: dict[str, list[float]] = {m: [] for m in metrics}
    counted: list[str] = []
    unmeasured = None
    for task in record.order[: record.max_tasks]:
        if not task_done(groups[task], ends):
            break
        seen = {m: observation(m, groups[task], ends, record) for m in metrics}
        unmeasured = next((m for m, v in seen.items() if v is None), None)
        if unmeasured is not None:
            break
        counted.append(task)
        for m in metrics:
            values[m].append(float(seen[m] or 0.0))
    paths, stop = _paths(record, counted, values)
    decided = stop is not None
    if decided:
        unmeasured = None
    kept = counted[: stop + 1] if stop is not None else counted
    updated = record.model_copy(
        update={
            "paths": paths,
            "decided_tasks": len(kept),
            "stopped_at": kept[-1] if kept else None,
            "decision": paths[0].decision if decided else None,
        }
    )
    return Replayed(updated, len(kept), decided, unmeasured)


def _paths(
    record: AdaptiveRecord, counted: list[str], values: dict[str, list[float]]
) -> tuple[list[SequencePath], int | None]:
    """Each metric's path, cut at the first look where all have decided (that look, or None)."""
    metrics = record.rule.metrics
    if not counted:
        return [SequencePath(metric=m) for m in metrics], None
    steps, sequences = {}, {}
    for m in metrics:
        sequences[m] = confidence_sequence(np.array(values[m]), record.rule.alpha, tests=len(metrics))
        steps[m] = decisions(sequences[m], record.rule.delta)
    firsts = [next((t for t, d in enumerate(steps[m]) if d is not None), None) for m in metrics]
    stop = None if any(f is None for f in firsts) else max(f for f in firsts if f is not None)
    end = len(counted) if stop is None else stop + 1
    paths = [
        SequencePath(
            metric=m,
            looks=[
                SequenceLook(task_id=task, value=values[m][t], low=float(seq.low[t]), high=float(seq.high[t]))
                for t, task in enumerate(counted[:end])
                for seq in [sequences[m]]
            ],
            decision=steps[m][end - 1],
        )
        for m in metrics
    ]
    return paths, stop


def redecide(
    record: AdaptiveRecord, episodes: Sequence[PlannedEpisode], ends: Mapping[str, EpisodeEnd]
) -> AdaptiveRecord:
    """The decision from other verdicts of the same episodes (a regrade): the same order and cap;
    the tasks that ran count while each is complete, the first look that decides stops it. A run
    that had stopped at a decision the new verdicts do not reach says so (``regraded``), never that
    a cap stopped it."""
    from coder_eval.run.adaptive_words import reason_text

    state = replay(record, episodes, ends)
    counted = set(record.order[: state.next_index])
    ran = [
        t
        for t in record.order
        if t not in counted and t in {e.task_id for e in episodes if e.episode_id in ends}
    ]
    stop = "decided" if state.decided else record.stop
    if not state.decided and record.stop == "decided":  # the tasks after the old decision never ran
        every = state.next_index >= record.max_tasks
        stop = (
            "regraded" if not every else "all_tasks" if record.max_tasks == len(record.order) else "max_tasks"
        )
    final = state.record.model_copy(
        update={
            "stop": stop,
            "decision": state.record.decision or state.record.paths[0].decision or "inconclusive",
            "in_flight": ran,
        }
    )
    return final.model_copy(update={"reason": "regraded: " + reason_text(final, state.unmeasured)})
