"""What ``coder-eval run`` shows while a run goes: the progress bar, what a resume runs again, the
leftovers removed, the lock taken over, the skills each arm was offered."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from coder_eval.cli.app import console, out, warn

if TYPE_CHECKING:
    from coder_eval.episode.plan import EpisodePlan
    from coder_eval.run import Reaped, RunSession
    from coder_eval.run.resume import ResumeDecision
    from coder_eval.trajectory import EpisodeEnd

COLUMNS = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())


class BarProgress:
    """A run's ``Progress`` on the console: a bar counting pass, fail and invalid."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress
        self.bar: TaskID | None = None
        self.total = 0
        self.counts = {"pass": 0, "fail": 0, "invalid": 0}
        self.suffix = ""

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
        self.show(advance=1)

    def show(self, advance: int = 0) -> None:
        text = f"pass {self.counts['pass']} fail {self.counts['fail']} invalid {self.counts['invalid']}"
        if self.bar is not None:
            self.progress.update(self.bar, advance=advance, description=text + self.suffix)

    def complete(self) -> None:
        if self.bar is not None:
            self.progress.update(self.bar, completed=self.total)


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
