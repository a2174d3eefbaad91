"""What ``coder-eval run`` shows while a run goes: the progress bar, what a resume runs again, the
leftovers removed, the lock taken over, the skills each arm was offered."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from coder_eval.cli.app import console, out, warn

if TYPE_CHECKING:
    from coder_eval.episode.plan import EpisodePlan
    from coder_eval.run import Reaped, RunSession
    from coder_eval.run.resume import ResumeDecision
    from coder_eval.trajectory import EpisodeEnd

COLUMNS = (
    TextColumn("{task.description}"),
    BarColumn(),
    MofNCompleteColumn(),
    TimeElapsedColumn(),
    TextColumn("ETA"),
    TimeRemainingColumn(),
)
"""The bar's columns: pass/fail/invalid, each variant's finished of planned and the cost so far; the
bar; finished of planned; time taken; the time still to go, from the pace so far."""


class BarProgress:
    """A run's ``Progress`` on the console: a bar counting pass, fail and invalid, each variant's
    episodes finished of planned (``plans``; ``kept``: episodes a resume keeps), the cost so far, and
    the time still to go. When the run stops before its plan (a budget, an answer reached) the bar is
    left where it stopped and says how many episodes started of those planned."""

    def __init__(
        self, progress: Progress, plans: Sequence[EpisodePlan] = (), kept: Mapping[str, EpisodeEnd] = {}
    ) -> None:
        self.progress = progress
        self.bar: TaskID | None = None
        self.total = 0
        self.counts = {"pass": 0, "fail": 0, "invalid": 0}
        self.suffix = ""
        self.planned = Counter(p.variant_id for p in plans)
        variant_of = {p.episode_id: p.variant_id for p in plans}
        self.finished = Counter(variant_of[e] for e in kept if e in variant_of)
        self.cost = sum(end.cost_usd or 0.0 for e, end in kept.items() if e in variant_of)
        self.stopped = ""

    def started(self, total: int, done: int, tampered: Sequence[str]) -> None:
        warn(
            [
                f"{episode}: the trajectory was written to after it ended (tampered); "
                "it is set aside in partial/ and run again"
                for episode in tampered
            ]
        )
        self.total = total
        self.bar = self.progress.add_task("running", total=total, completed=done)

    def dashboard(self, url: str) -> None:
        console.print(f"dask dashboard: {url}", highlight=False)

    def episode_done(self, plan: EpisodePlan, end: EpisodeEnd) -> None:
        self.counts[end.outcome] += 1
        self.finished[plan.variant_id] += 1
        self.cost += end.cost_usd or 0.0
        self.show(advance=1)

    def description(self) -> str:
        """``pass 3 fail 1 invalid 0 · baseline 2/42 with_skill 2/42 · $0.31``, and what the run adds."""
        text = f"pass {self.counts['pass']} fail {self.counts['fail']} invalid {self.counts['invalid']}"
        if len(self.planned) > 1:
            text += " · " + " ".join(f"{v} {self.finished[v]}/{n}" for v, n in self.planned.items())
        return f"{text} · ${self.cost:.2f}{self.suffix}{self.stopped}"

    def show(self, advance: int = 0) -> None:
        if self.bar is not None:
            self.progress.update(self.bar, advance=advance, description=self.description())

    def complete(self, budget_stopped: bool = False) -> None:
        """The run is over: the bar stays where it got to; when that is short of the plan, it says
        how many episodes started of those planned (and that the budget stopped it)."""
        if self.bar is None:
            return
        started = int(self.progress.tasks[self.progress.task_ids.index(self.bar)].completed)
        if started < self.total:
            why = "budget reached: " if budget_stopped else ""
            self.stopped = f" · {why}{started} of {self.total} started"
        self.show()


def progress_bar() -> Progress:
    return Progress(*COLUMNS, console=console, transient=False)


def print_took_over(session: RunSession) -> None:
    if session.took_over is not None:
        console.print(
            f"resume: took over the run's lock from {session.took_over.describe()}, which is no longer "
            "running",
            highlight=False,
        )


def print_decision(decision: ResumeDecision) -> None:
    """What the resume runs again beyond the unfinished episodes, and why."""
    record = decision.record
    lines = [
        (record.replanned, "ran a task that has changed since: run again with the tasks as they are now"),
        (record.harness_invalid, "were left invalid by the harness (a lost worker, a sandbox): run again"),
        (record.retried_invalid, "were invalid (provider or grader): run again (--retry-invalid)"),
    ]
    for episodes, why in lines:
        if episodes:
            listed = ", ".join(episodes[:5]) + (" ..." if len(episodes) > 5 else "")
            console.print(f"resume: {len(episodes)} finished episode(s) {why}: {listed}", highlight=False)


def print_reaped(reaped: Reaped) -> None:
    if reaped.count:
        console.print(f"removed {reaped.count} sandbox(es) left by a harness that is no longer running")
    warn([f"a leftover sandbox could not be removed: {problem}" for problem in reaped.problems])


def print_skills(lines: Sequence[str]) -> None:
    for line in lines:
        out.print(line, highlight=False, markup=False)
