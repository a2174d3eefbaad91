"""Pay for answers, not for runs: a run that stops when its comparison is decided.

The rule (``UntilConclusiveRule``) is recorded in run.json with a random task order before the
first result (``start``). ``execute_until_conclusive`` then runs the tasks in that order, every
arm and repeat of a task together, a few tasks at a time (enough to fill ``-j`` slots), and after
each wave replays the completed tasks, in the recorded order, through the confidence sequence
(``adaptive_replay``): episodes finishing out of order on any executor decide nothing early. It
stops at the first look where every decision metric is decided, or at the budget (tasks, episodes,
dollars); tasks of the last wave after the stopping task are kept and do not count. An episode the
harness lost (``invalid_cause: harness``) is run again (at most ``ATTEMPTS`` times); a task is never
dropped, so one the harness keeps losing stops the run (``blocked``). Any other invalid episode (the
provider's, a grader's, the agent's own) is never run again: it counts against its arm, so an arm
can neither re-roll its failures nor block the run with them.

Example::

    with RunSession.create(RunInputs(experiment="experiments/skills_ab.yaml"), Path("runs/ab")) as s:
        start(s, UntilConclusiveRule(delta=0.2, max_tasks=80))
        record = execute_until_conclusive(s, Batch(jobs=4))
        record.decision, record.reason    # 'better', 'with_skill better after 18 of at most 80 tasks: ...'
        s.finish()
"""

from __future__ import annotations

import random
import secrets
from collections import Counter
from dataclasses import replace
from typing import Protocol, runtime_checkable

from coder_eval.episode.snapshots import MB
from coder_eval.errors import InputError
from coder_eval.executors.base import Executor
from coder_eval.manifest import AdaptiveRecord, Stop, UntilConclusiveRule
from coder_eval.run.adaptive_replay import Replayed, by_task, lost_by_harness, replay, task_done
from coder_eval.run.adaptive_words import ATTEMPT_RUNS, reason_text
from coder_eval.run.batch import BatchSummary, kept_episodes, run_batch
from coder_eval.run.execute import Batch, Progress, Quiet
from coder_eval.run.session import RunSession
from coder_eval.trajectory import EpisodeEnd

ATTEMPTS = ATTEMPT_RUNS
"""Runs of an episode the harness lost before its task stops the run (``blocked``)."""


@runtime_checkable
class SequenceProgress(Protocol):
    """A ``Progress`` that also shows the sequence after each wave (the console's live interval)."""

    def looked(self, record: AdaptiveRecord) -> None:
        """The record as the tasks completed so far give it."""


def arms(rule: UntilConclusiveRule, variants: list[str]) -> tuple[str, str]:
    """(baseline, candidate): the rule's, else the variant named ``baseline`` (else the first)
    against the first other; ``InputError`` with fewer than two variants."""
    if len(variants) < 2:
        raise InputError("--until-conclusive compares two variants; the experiment has one")
    baseline = rule.baseline or ("baseline" if "baseline" in variants else variants[0])
    candidate = rule.candidate or next(v for v in variants if v != baseline)
    for name in (baseline, candidate):
        if name not in variants:
            raise InputError(f"until_conclusive: {name!r} is not a variant; variants: {', '.join(variants)}")
    if baseline == candidate:
        raise InputError(f"until_conclusive: baseline and candidate are both {baseline!r}")
    return baseline, candidate


def start(session: RunSession, rule: UntilConclusiveRule, seed: int | None = None) -> AdaptiveRecord:
    """Draw the task order (``seed``: default a fresh random one, recorded) and write the rule and
    the order into run.json, before any episode runs."""
    manifest = session.manifest
    baseline, candidate = arms(rule, manifest.variants)
    seed = seed if seed is not None else rule.seed if rule.seed is not None else secrets.randbits(32)
    order = list(manifest.tasks)
    random.Random(seed).shuffle(order)
    per_task = max(len(group) for group in by_task(manifest.episodes).values())
    record = AdaptiveRecord(
        rule=rule,
        baseline=baseline,
        candidate=candidate,
        seed=seed,
        order=order,
        max_tasks=min(rule.max_tasks or len(order), len(order)),
        episodes_per_task=per_task,
    )
    manifest.adaptive = record
    session.run.write_manifest(manifest)
    return record


def execute_until_conclusive(
    session: RunSession, batch: Batch = Batch(), progress: Progress | None = None
) -> AdaptiveRecord:
    """Run the recorded order until the decision (``start`` first; a reopened run resumes where
    it was, with the same order and the same decision from the same episodes). A run that has
    stopped (decided, blocked, at a cap or budget) stays stopped: a resume runs nothing more."""
    record = session.manifest.adaptive
    if record is None:
        raise InputError(f"{session.run.path}: not a run --until-conclusive started (no rule in run.json)")
    if record.stop is not None:
        planned = {e.episode_id for e in session.manifest.episodes}
        kept = len(session.run.finished_episodes().keys() & planned)
        session.batch = BatchSummary(skipped_done=kept, budget_stopped=record.stop == "max_cost_usd")
        return record
    if batch.max_cost is None and record.rule.max_cost_usd is not None:
        batch = replace(batch, max_cost=record.rule.max_cost_usd)
    scheduler = _Scheduler(session, batch, progress or Quiet())
    session.execute(batch, progress, drive=scheduler.drive)
    assert session.manifest.adaptive is not None
    return session.manifest.adaptive


class _Scheduler:
    """The waves of one ``execute``: what runs next, and when to stop."""

    def __init__(self, session: RunSession, batch: Batch, progress: Progress) -> None:
        self.session, self.progress = session, progress
        self.batch = replace(
            batch, resume=session.resuming, rerun=session.decision.rerun if session.decision else frozenset()
        )
        self.plans = {p.episode_id: p for p in session.resolution.plans}
        """The plans, until ``drive`` takes them as the session froze them."""
        self.groups = by_task(session.manifest.episodes)
        self.attempts: Counter[str] = Counter()  # re-runs of a task's invalid episodes
        self.summary = BatchSummary()

    @property
    def record(self) -> AdaptiveRecord:
        assert self.session.manifest.adaptive is not None
        return self.session.manifest.adaptive

    async def drive(self, executor: Executor) -> BatchSummary:
        run = self.session.run
        self.plans = {p.episode_id: p for p in self.session.plans}
        if self.batch.resume:
            self.summary.skipped_done = len(kept_episodes(run, self.batch.rerun).keys() & self.plans.keys())
        rerun = set(self.batch.rerun)
        while True:
            ends = run.finished_episodes()
            state = replay(self.record, self.session.manifest.episodes, ends)
            self._write(state.record)
            wave = self._wave(state.next_index, ends)
            stop = self._stop(state, ends, wave)
            if stop is not None:
                self._finish(state, stop, ends)
                return self.summary
            await self._run(wave, ends, rerun, executor)
            rerun = set()

    def _wave(self, index: int, ends: dict[str, EpisodeEnd]) -> list[str]:
        """The next tasks to run: from the first that does not count yet, as many as fill the
        slots, within the task and episode caps."""
        record = self.record
        width = max(1, -(-self.batch.jobs // record.episodes_per_task))
        wave = record.order[index : min(index + width, record.max_tasks)]
        cap = record.rule.max_episodes
        if cap is None:
            return wave
        used = sum(episode in ends for episode in self.plans)
        fits = []
        for task in wave:
            used += sum(p.episode_id not in ends for p in self.groups[task])
            if used > cap:
                break
            fits.append(task)
        return fits

    def _stop(self, state: Replayed, ends: dict[str, EpisodeEnd], wave: list[str]) -> Stop | None:
        record = self.record
        if state.decided:
            return "decided"
        if state.unmeasured is not None:
            return "blocked"
        if state.next_index >= record.max_tasks:
            return "all_tasks" if record.max_tasks == len(record.order) else "max_tasks"
        if self.summary.budget_stopped or self._spent(ends) >= (self.batch.max_cost or float("inf")):
            return "max_cost_usd"
        if not wave:
            return "max_episodes"
        first = record.order[state.next_index]
        if task_done(self.groups[first], ends) is False and self.attempts[first] >= ATTEMPTS - 1:
            return "blocked"
        return None

    async def _run(
        self, wave: list[str], ends: dict[str, EpisodeEnd], rerun: set[str], executor: Executor
    ) -> None:
        """The wave's episodes not finished valid (and those a resume runs again), the others kept."""
        todo = []
        for task in wave:
            again = [
                p.episode_id
                for p in self.groups[task]
                if _again(ends.get(p.episode_id), p.episode_id in rerun)
            ]
            if task_done(self.groups[task], ends) is False:
                self.attempts[task] += 1
            todo += again
        for episode in todo:
            if episode in ends:
                self.session.run.set_aside(episode)
        batch = self.batch
        left = None if batch.max_cost is None else max(batch.max_cost - self._spent(ends), 0.0)
        cap_mb = batch.snapshot_max_mb
        part = await run_batch(
            [self.plans[e] for e in todo],
            self.session.run,
            run_id=self.session.manifest.run_id,
            concurrency=batch.jobs,
            max_cost_usd=left,
            on_done=self.progress.episode_done,
            executor=executor,
            snapshot_max_bytes=int(cap_mb * MB) if cap_mb is not None else None,
        )
        for outcome, count in part.outcomes.items():
            self.summary.outcomes[outcome] += count
        self.summary.budget_stopped |= part.budget_stopped
        self.summary.not_started += part.not_started

    def _spent(self, ends: dict[str, EpisodeEnd]) -> float:
        return sum(end.cost_usd or 0.0 for episode, end in ends.items() if episode in self.plans)

    def _finish(self, state: Replayed, stop: Stop, ends: dict[str, EpisodeEnd]) -> None:
        """The final record: the decision, why it stopped, the tasks that ran and did not count."""
        record = state.record
        counted = set(record.order[: state.next_index])
        blocked = record.order[state.next_index] if stop == "blocked" else None
        ran = [
            t
            for t in record.order
            if t not in counted and t != blocked and any(p.episode_id in ends for p in self.groups[t])
        ]
        final = record.model_copy(
            update={
                "stop": stop,
                "decision": record.decision or record.paths[0].decision or "inconclusive",
                "in_flight": ran,
                "blocked": blocked,
            }
        )
        final = final.model_copy(update={"reason": reason_text(final, state.unmeasured)})
        self.summary.cost_usd = self._spent(ends)
        if stop == "max_cost_usd":  # what the cap left unstarted: every episode of the tasks still open
            self.summary.budget_stopped = True
            tasks = record.order[: record.max_tasks]
            self.summary.not_started = sum(p.episode_id not in ends for t in tasks for p in self.groups[t])
        self._write(final)

    def _write(self, record: AdaptiveRecord) -> None:
        self.session.manifest.adaptive = record
        self.session.run.write_manifest(self.session.manifest)
        if isinstance(self.progress, SequenceProgress):
            self.progress.looked(record)


def _again(end: EpisodeEnd | None, asked: bool) -> bool:
    """An episode runs (again) when it has not finished, the harness lost it, or a resume asks; an
    invalid episode of any other cause is its arm's own and counts against it (``adaptive_replay``)."""
    return end is None or asked or lost_by_harness(end)
