"""``coder-eval regrade``: grade a finished run's episodes again into a new run, no agent run again."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from coder_eval.cli.app import app, console, out, warn
from coder_eval.cli.report import print_run_reports
from coder_eval.errors import ExitCode

if TYPE_CHECKING:
    from coder_eval.regrade import Regraded, RegradeResult

CHANGES_LISTED = 20
"""Episodes whose outcome changed that are listed by name (the rest are counted)."""


@app.command()
def regrade(
    run_dir: Annotated[Path, typer.Argument(help="The run to re-grade (runs/<run_id>, runs/latest).")],
    task_files: Annotated[
        list[Path] | None,
        typer.Argument(
            help="Task files or folders whose criteria replace the recorded ones (default: none)."
        ),
    ] = None,
    new_run_dir: Annotated[
        Path | None, typer.Option("--run-dir", help="The re-graded run's directory (default runs/<run_id>).")
    ] = None,
    jobs: Annotated[int, typer.Option("-j", "--jobs", min=1, help="Episodes graded at once.")] = 1,
    report: Annotated[bool, typer.Option(help="Render the reports of the re-graded run.")] = True,
) -> None:
    """Grade a run's recorded episodes again, as the task files now define them or as recorded."""
    from coder_eval.experiment.settings import runs_root
    from coder_eval.regrade import regrade_run
    from coder_eval.run_dir import RunDir, new_run_id

    target = new_run_dir or runs_root() / new_run_id()
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
    ) as progress:
        bar = progress.add_task("re-grading", total=len(RunDir.open(run_dir).trajectory_paths()))

        def on_done(_: Regraded) -> None:
            progress.update(bar, advance=1)

        result = asyncio.run(
            regrade_run(
                run_dir, target, task_files or [], concurrency=jobs, command=sys.argv, on_done=on_done
            )
        )
    warn(result.problems)
    _print(result)
    manifest = result.run.read_manifest()
    if report and not print_run_reports(result.run.path, manifest.variants):
        raise typer.Exit(ExitCode.REPORT_FAILED)


def _print(result: RegradeResult) -> None:
    record = result.record
    out.print(transitions(result.episodes))
    changed = [e for e in result.episodes if e.before != e.after.outcome]
    for episode in changed[:CHANGES_LISTED]:
        out.print(f"  {episode.episode_id}: {episode.before} -> {episode.after.outcome}", highlight=False)
    if len(changed) > CHANGES_LISTED:
        out.print(f"  ... and {len(changed) - CHANGES_LISTED} more", highlight=False)
    if record.criteria_kept or record.criteria_not_regraded:
        warn(
            [
                f"{record.criteria_kept} workspace criteria kept as recorded and "
                f"{record.criteria_not_regraded} not re-graded (errors): their episodes have no "
                "workspace snapshot; see each episode_end's notes"
            ]
        )
    cost = "unknown" if record.evaluation_cost_usd is None else f"${record.evaluation_cost_usd:.4f}"
    out.print(
        f"regraded: {result.run.path}  from {record.run_dir}  {record.episodes} episodes, "
        f"{record.changed} changed outcome  evaluation cost {cost}  {record.seconds:.1f} s",
        highlight=False,
    )


def transitions(episodes: Sequence[Regraded]) -> Table:
    """Outcomes before and after, per variant: ``pass 10 -> 8``."""
    table = Table(
        "variant", "episodes", "pass", "fail", "invalid", "changed", title="outcomes: recorded -> re-graded"
    )
    for variant in sorted({e.variant_id for e in episodes}):
        mine = [e for e in episodes if e.variant_id == variant]
        cells = []
        for outcome in ("pass", "fail", "invalid"):
            before = sum(e.before == outcome for e in mine)
            after = sum(e.after.outcome == outcome for e in mine)
            cells.append(f"{before} -> {after}" if before != after else str(after))
        table.add_row(variant, str(len(mine)), *cells, str(sum(e.before != e.after.outcome for e in mine)))
    return table
