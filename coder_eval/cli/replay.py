"""``coder-eval replay``: run a finished run's episodes again from their endpoint records, offline."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from coder_eval.cli.app import app, console, out, warn
from coder_eval.errors import ExitCode

if TYPE_CHECKING:
    from coder_eval.regrade import Replayed, ReplayResult

LISTED = 20
"""Episodes that came out differently listed by name (the rest are counted)."""


@app.command()
def replay(
    run_dir: Annotated[Path, typer.Argument(help="The run to replay (runs/<run_id>, runs/latest).")],
    task_files: Annotated[
        list[Path] | None,
        typer.Argument(help="Task files or folders whose criteria grade the replay (default: as recorded)."),
    ] = None,
    new_run_dir: Annotated[
        Path | None, typer.Option("--run-dir", help="The replay's run directory (default runs/<run_id>).")
    ] = None,
    jobs: Annotated[int, typer.Option("-j", "--jobs", min=1, help="Episodes replayed at once.")] = 1,
) -> None:
    """Replay a run's episodes through the real CLI from their endpoint records, with no key, and compare.

    Each episode's record (what the model answered, step by step) becomes a script for the scripted
    server; the same task runs again through the same CLI, and its tool calls, grades and outcome are
    compared with the recording. Exit 1 when any episode came out differently (docs/replay.md).
    """
    from coder_eval.regrade import replay_run
    from coder_eval.run_dir import new_run_id

    target = new_run_dir or Path("runs") / new_run_id()
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
    ) as progress:
        bar = progress.add_task("replaying", total=None)

        def on_done(_: Replayed) -> None:
            progress.update(bar, advance=1)

        result = asyncio.run(
            replay_run(run_dir, target, task_files or [], concurrency=jobs, command=sys.argv, on_done=on_done)
        )
    _print(result)
    if result.record.differing:
        raise typer.Exit(ExitCode.GATE_FAILED)  # the replay is a gate: the record must reproduce


def _print(result: ReplayResult) -> None:
    record = result.record
    warn([f"not replayed: {episode}: {why}" for episode, why in record.skipped.items()])
    for episode, differences in list(record.differing.items())[:LISTED]:
        out.print(f"  {episode}: {'; '.join(differences)}", markup=False, highlight=False, soft_wrap=True)
    if len(record.differing) > LISTED:
        out.print(f"  ... and {len(record.differing) - LISTED} more", highlight=False)
    out.print(
        f"replayed: {result.run.path}  from {record.run_dir}  {record.episodes} episodes, {record.same} the "
        f"same, {len(record.differing)} different",
        highlight=False,
    )
