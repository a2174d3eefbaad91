"""The ``coder-eval`` command: run, plan, validate, report.

Exit codes (``coder_eval.errors.ExitCode``): 0 success; 1 a gate failed (or, for ``validate``, a
task is broken); 2 invalid input; 3 a budget stopped the run (partial results kept); 4 a report
failed to render; 130 interrupted.
"""

from __future__ import annotations

import asyncio
import random
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from coder_eval.errors import CoderEvalError, ExitCode, InputError
from coder_eval.run_dir import PlannedEpisode, RunDir, RunManifest, new_run_id
from coder_eval.runner import BatchSummary, EpisodePlan, plan_episodes, run_batch, versions
from coder_eval.task import TaskSpec, load_tasks
from coder_eval.trajectory import EpisodeEnd

app = typer.Typer(
    add_completion=False, no_args_is_help=True, help="Evaluate AI coding agents on task suites."
)
console = Console(stderr=True)
out = Console()

Paths = Annotated[list[Path], typer.Argument(help="Task files or folders of them.")]


def main() -> None:
    """Entry point: run the app, mapping coder_eval errors to exit codes once, here."""
    try:
        code = app(standalone_mode=False)
    except CoderEvalError as exc:
        console.print(f"[red]error:[/red] {exc}", markup=True, highlight=False)
        sys.exit(ExitCode.INVALID_INPUT if isinstance(exc, InputError) else 1)
    except (typer.Exit, SystemExit) as exc:
        sys.exit(getattr(exc, "exit_code", None) or getattr(exc, "code", 0) or 0)
    except KeyboardInterrupt:
        console.print("interrupted")
        sys.exit(ExitCode.INTERRUPTED)
    except Exception as exc:  # click's usage errors
        import click

        if isinstance(exc, click.ClickException):
            exc.show()
            sys.exit(ExitCode.INVALID_INPUT)
        raise
    sys.exit(code if isinstance(code, int) else 0)


def select_tasks(
    paths: Sequence[Path], agent: str | None, tags: Sequence[str] | None, sample: int | None
) -> list[TaskSpec]:
    """Load tasks (with ``--agent`` as an override), filter by tags, sample with a fixed seed."""
    overrides: dict[str, Any] = {"agent": {"kind": agent}} if agent else {}
    tasks = [t for t in load_tasks(paths, overrides) if not t.skip]
    if tags:
        tasks = [t for t in tasks if set(tags) & set(t.tags)]
    if sample is not None:
        if sample < 1:
            raise InputError("--sample must be at least 1")
        tasks = sorted(random.Random(0).sample(tasks, min(sample, len(tasks))), key=lambda t: t.task_id)
    if not tasks:
        raise InputError("no task selected: check the paths, --tags and skip flags")
    return tasks


@app.command()
def run(
    paths: Annotated[list[Path] | None, typer.Argument(help="Task files or folders of them.")] = None,
    agent: Annotated[str | None, typer.Option(help="Agent kind for every task (oracle, none, ...).")] = None,
    repeats: Annotated[int, typer.Option(min=1, help="Repeats per task.")] = 1,
    jobs: Annotated[int, typer.Option("-j", "--jobs", min=1, help="Episodes run at once.")] = 1,
    run_dir: Annotated[
        Path | None, typer.Option(help="This run's directory (default runs/<run_id>).")
    ] = None,
    resume: Annotated[bool, typer.Option(help="Finish an interrupted run (default runs/latest).")] = False,
    tags: Annotated[list[str] | None, typer.Option(help="Only tasks with any of these tags.")] = None,
    sample: Annotated[int | None, typer.Option(help="Run a fixed-seed random sample of N tasks.")] = None,
    max_cost_usd: Annotated[float | None, typer.Option(help="Stop launching episodes once spent.")] = None,
) -> None:
    """Run tasks and write one trajectory per episode under runs/<run_id>/."""
    if resume:
        run, manifest = _reopen(run_dir or Path("runs/latest"))
        inputs = manifest.extra.get("inputs", {})
        paths = paths or [Path(p) for p in inputs.get("paths", [])]
        agent = agent or inputs.get("agent")
        repeats = inputs.get("repeats", repeats)
        tags, sample = tags or inputs.get("tags"), sample or inputs.get("sample")
    if not paths:
        raise InputError("give task files or folders to run")
    plans = plan_episodes(select_tasks(paths, agent, tags, sample), repeats)
    if resume:
        _check_same_plan(manifest, plans)
    else:
        inputs = {
            "paths": [str(p) for p in paths],
            "agent": agent,
            "repeats": repeats,
            "tags": tags,
            "sample": sample,
        }
        run, manifest = _create(run_dir, plans, repeats, inputs)
    summary = _execute(run, manifest, plans, jobs, resume, max_cost_usd)
    out.print(
        f"run: {run.path}  pass {summary.outcomes['pass']}  fail {summary.outcomes['fail']}  "
        f"invalid {summary.outcomes['invalid']}"
        + (f"  (kept {summary.skipped_done} finished)" if resume else "")
    )
    if summary.budget_stopped:
        console.print(f"budget of ${max_cost_usd} reached: {summary.not_started} episodes not started")
        raise typer.Exit(ExitCode.BUDGET_STOPPED)


def _create(
    run_dir: Path | None, plans: list[EpisodePlan], repeats: int, inputs: dict[str, Any]
) -> tuple[RunDir, RunManifest]:
    run_id = run_dir.name if run_dir else new_run_id()
    manifest = RunManifest(
        run_id=run_id,
        command=sys.argv,
        variants=sorted({p.variant_id for p in plans}),
        tasks=sorted({p.task.task_id for p in plans}),
        repeats=repeats,
        episodes=[
            PlannedEpisode(
                episode_id=p.episode_id, task_id=p.task.task_id, variant_id=p.variant_id, repeat=p.repeat
            )
            for p in plans
        ],
        versions=versions(),
        extra={"inputs": inputs},
    )
    root = run_dir.parent if run_dir else Path("runs")
    if run_dir is not None and run_dir.exists():
        raise InputError(f"{run_dir} already exists; use --resume to finish it or choose another --run-dir")
    return RunDir.create(root, manifest), manifest


def _reopen(path: Path) -> tuple[RunDir, RunManifest]:
    run = RunDir.open(path)
    return run, run.read_manifest()


def _check_same_plan(manifest: RunManifest, plans: list[EpisodePlan]) -> None:
    planned = {e.episode_id for e in manifest.episodes}
    now = {p.episode_id for p in plans}
    if planned != now:
        extra = sorted(now - planned)[:3] or sorted(planned - now)[:3]
        raise InputError(
            f"--resume: the tasks differ from the run's plan (e.g. {extra}); resume with the same inputs"
        )


def _execute(
    run: RunDir,
    manifest: RunManifest,
    plans: list[EpisodePlan],
    jobs: int,
    resume: bool,
    max_cost: float | None,
) -> BatchSummary:
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=console, transient=False) as progress:
        bar = progress.add_task("running", total=len(plans))
        counts = {"pass": 0, "fail": 0, "invalid": 0}

        def on_done(plan: EpisodePlan, end: EpisodeEnd) -> None:
            counts[end.outcome] += 1
            text = f"pass {counts['pass']} fail {counts['fail']} invalid {counts['invalid']}"
            progress.update(bar, advance=1, description=text)

        manifest.status = "running"
        run.write_manifest(manifest)
        try:
            summary = asyncio.run(
                run_batch(
                    plans,
                    run,
                    run_id=manifest.run_id,
                    concurrency=jobs,
                    resume=resume,
                    max_cost_usd=max_cost,
                    on_done=on_done,
                )
            )
        except KeyboardInterrupt:
            manifest.status = "interrupted"
            run.write_manifest(manifest)
            raise
        progress.update(bar, completed=len(plans))
    manifest.status = "budget_stopped" if summary.budget_stopped else "completed"
    run.write_manifest(manifest)
    return summary


@app.command()
def plan(
    paths: Paths,
    agent: Annotated[str | None, typer.Option(help="Agent kind for every task.")] = None,
    repeats: Annotated[int, typer.Option(min=1, help="Repeats per task.")] = 1,
    tags: Annotated[list[str] | None, typer.Option(help="Only tasks with any of these tags.")] = None,
    sample: Annotated[int | None, typer.Option(help="A fixed-seed random sample of N tasks.")] = None,
) -> None:
    """Validate tasks and list the episodes that would run, without running them."""
    plans = plan_episodes(select_tasks(paths, agent, tags, sample), repeats)
    table = Table("episode", "task", "variant", "repeat", "agent", "model", title=f"{len(plans)} episodes")
    for p in plans:
        table.add_row(
            p.episode_id,
            p.task.task_id,
            p.variant_id,
            str(p.repeat),
            p.task.agent.kind,
            p.task.agent.model or "-",
        )
    out.print(table)


@app.command()
def validate(paths: Paths) -> None:
    """Grader self-test: every task must pass with the oracle agent and fail with the none agent."""
    from coder_eval.validate import validate_tasks

    report = asyncio.run(validate_tasks(select_tasks(paths, None, None, None)))
    table = Table("task", "oracle", "none", "verdict", title="grader self-test")
    for row in report:
        style = "green" if row.ok else "red"
        table.add_row(row.task_id, row.oracle, row.none, f"[{style}]{row.verdict}[/{style}]")
    out.print(table)
    if not all(row.ok for row in report):
        raise typer.Exit(ExitCode.GATE_FAILED)
