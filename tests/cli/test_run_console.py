"""The progress bar of ``coder-eval run``: outcomes, each variant's finished of planned, the cost so far,
the time to go, and where a run that stopped short of its plan stopped."""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console
from rich.progress import Progress

from coder_eval.cli.run_console import COLUMNS, BarProgress
from coder_eval.episode.plan import EpisodePlan, plan_episodes
from coder_eval.task import load_tasks
from coder_eval.trajectory import EpisodeEnd
from tests.helpers import minimal_task


def plans(tmp_path: Path) -> list[EpisodePlan]:
    tasks = load_tasks([minimal_task(tmp_path, "a"), minimal_task(tmp_path, "b")])
    return [
        EpisodePlan(p.task, variant, p.repeat)
        for variant in ("baseline", "with_skill")
        for p in plan_episodes(tasks, 2)
    ]


def drawn(progress: Progress) -> str:
    """The bar's row as the console draws it."""
    screen = io.StringIO()
    Console(file=screen, width=220, color_system=None).print(progress.make_tasks_table(progress.tasks))
    return screen.getvalue()


def bar_on(screen: io.StringIO) -> Progress:
    return Progress(*COLUMNS, console=Console(file=screen), auto_refresh=False)


def test_the_bar_counts_outcomes_per_variant_and_the_cost_so_far(tmp_path: Path) -> None:
    planned, screen = plans(tmp_path), io.StringIO()
    with bar_on(screen) as progress:
        bar = BarProgress(progress, planned)
        bar.started(len(planned), 0, [])
        bar.episode_done(planned[0], EpisodeEnd(outcome="pass", status="completed", cost_usd=0.25))
        bar.episode_done(planned[4], EpisodeEnd(outcome="fail", status="completed", cost_usd=0.5))
        line = drawn(progress)
    assert "pass 1 fail 1 invalid 0 · baseline 1/4 with_skill 1/4 · $0.75" in line
    assert "2/8" in line and "ETA" in line


def test_a_budget_stop_shows_started_of_planned_not_a_full_bar(tmp_path: Path) -> None:
    planned, screen = plans(tmp_path), io.StringIO()
    kept = {planned[1].episode_id: EpisodeEnd(outcome="pass", status="completed", cost_usd=1.0)}
    with bar_on(screen) as progress:
        bar = BarProgress(progress, planned, kept)  # a resume that keeps one episode
        bar.started(len(planned), 1, [])
        bar.episode_done(planned[5], EpisodeEnd(outcome="pass", status="completed", cost_usd=4.0))
        bar.complete(budget_stopped=True)
        line = drawn(progress)
    assert "baseline 1/4 with_skill 1/4 · $5.00 · budget reached: 2 of 8 started" in line
    assert "2/8" in line and "8/8" not in line
