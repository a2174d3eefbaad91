"""What ``--resume`` keeps and what it runs again, decided before anything runs.

Example::

    decision = decide_resume(run, manifest, plans)      # ResumeRefused (exit 2) when tasks changed
    decision.rerun                                      # finished episodes to run again
    manifest.resumes.append(decision.record)            # what this resume kept, and ran again why

A finished episode is kept only when the task it ran is the task as it resolves now: its recorded
resolved task (prompt, criteria, agent, sandbox, limits: every field) and its content hash (hidden
fields, and the bytes of every file and folder the task names) are compared with the task's current
resolution (``task_hash.py``). A difference is refused, naming the episodes and what changed, unless
``replan`` asks to run the changed episodes again with the tasks as they are now.

What is run again without asking: interrupted episodes (no ``episode_end``), episodes written to
after they ended, and invalid ones the harness caused (``invalid_cause: harness``: a lost dask
worker or scheduler, a sandbox that could not be made). Invalid ones the provider, the agent's CLI
or a grader caused are kept, unless ``retry_invalid``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from coder_eval.episode.plan import EpisodePlan
from coder_eval.episode.runner import harness_invalid, recorded_task_data
from coder_eval.errors import InputError, ResumeRefused
from coder_eval.run_dir import ResumeRecord, RunDir, RunManifest
from coder_eval.task.files import task_hash
from coder_eval.trajectory import EpisodeStart

LISTED = 10
"""Episodes a refusal names one by one (the rest are counted)."""
FILES_CHANGED = "the files it reads or its hidden fields (templates, hidden tests, reference, scripts)"


@dataclass(frozen=True)
class ResumeDecision:
    """What a resume keeps and runs again: the record for ``run.json``, and the finished episodes to
    run again (``run_batch(rerun=...)``; those the harness made invalid it runs again itself)."""

    record: ResumeRecord
    rerun: frozenset[str]
    changed: dict[str, list[str]]


def decide_resume(
    run: RunDir,
    manifest: RunManifest,
    plans: Sequence[EpisodePlan],
    *,
    replan: bool = False,
    retry_invalid: bool = False,
) -> ResumeDecision:
    """Check the plan against the run and decide (see the module docstring)."""
    check_same_plan(manifest, plans)
    recorded = run.recorded_episodes()
    finished = run.finished_episodes()
    harness, retried, changed = [], [], {}
    for plan in plans:
        end = finished.get(plan.episode_id)
        if end is None:
            continue
        if harness_invalid(end):
            harness.append(plan.episode_id)
        elif retry_invalid and end.outcome == "invalid":
            retried.append(plan.episode_id)
        elif differences := task_changes(recorded[plan.episode_id].start, plan):
            changed[plan.episode_id] = differences
    if changed and not replan:
        raise ResumeRefused(refusal(changed))
    record = ResumeRecord(
        kept=sum(p.episode_id in finished for p in plans) - len(harness) - len(retried) - len(changed),
        unfinished=[p.episode_id for p in plans if p.episode_id not in finished],
        harness_invalid=harness,
        retried_invalid=retried,
        replanned=sorted(changed),
    )
    return ResumeDecision(record, frozenset(retried) | frozenset(changed), changed)


def check_same_plan(manifest: RunManifest, plans: Sequence[EpisodePlan]) -> None:
    """The inputs must plan the run's own episodes, no more and no fewer."""
    planned = {e.episode_id for e in manifest.episodes}
    now = {p.episode_id for p in plans}
    if planned != now:
        extra = sorted(now - planned)[:3] or sorted(planned - now)[:3]
        raise InputError(
            f"--resume: the tasks differ from the run's plan (e.g. {extra}); resume with the same inputs"
        )


def task_changes(start: EpisodeStart | None, plan: EpisodePlan) -> list[str]:
    """What differs between the task an episode ran (its ``episode_start``) and the task as it
    resolves now: field paths (``initial_prompt``, ``agent.model``), or the files it reads."""
    if start is None:
        return []
    changes = differences(start.task, recorded_task_data(plan.task))
    if not changes and start.task_hash is not None and start.task_hash != task_hash(plan.task):
        changes = [FILES_CHANGED]
    return changes


def differences(recorded: Any, now: Any, prefix: str = "", depth: int = 2) -> list[str]:
    """Dotted paths (at most ``depth`` deep) where ``now`` differs from ``recorded``; a field the
    recording lacks (added by a newer coder_eval) is not a difference.

    Example: ``differences({"a": {"b": 1}}, {"a": {"b": 2}, "c": 3})`` -> ``["a.b"]``
    """
    if not isinstance(recorded, dict) or not isinstance(now, dict) or depth == 0:
        return [] if recorded == now else [prefix.rstrip(".") or "(the whole task)"]
    found = []
    for key in sorted(set(recorded) | set(now)):
        if key not in recorded:
            continue
        if key not in now:
            found.append(f"{prefix}{key}")
        else:
            found += differences(recorded[key], now[key], f"{prefix}{key}.", depth - 1)
    return found


def refusal(changed: dict[str, list[str]]) -> str:
    """The refusal, naming the episodes and what changed."""
    lines = [f"  {episode}: {', '.join(what)}" for episode, what in sorted(changed.items())[:LISTED]]
    if len(changed) > LISTED:
        lines.append(f"  ... and {len(changed) - LISTED} more")
    return "\n".join(
        [
            f"--resume: {len(changed)} finished episode(s) ran a task that has changed since; resuming "
            "would mix episodes of the task as it was with episodes of it as it is now:",
            *lines,
            "put the tasks back as they were, or pass --replan to run those episodes again with the "
            "tasks as they are now",
        ]
    )
