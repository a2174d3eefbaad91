"""``coder-eval history``: index run folders into the run store and list the runs it holds.

Example::

    coder-eval history --index runs                    # index every run folder under runs/
    coder-eval history --branch main --task hello      # runs on main with an episode of task hello
"""

from __future__ import annotations

import math
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape
from rich.table import Column, Table

from coder_eval.cli.app import app, console, out, whole

if TYPE_CHECKING:
    import pandas as pd

    from coder_eval.store import RunStore

StoreOpt = Annotated[
    Path | None, typer.Option(help="The run store (default $CODER_EVAL_STORE, else runs/history.duckdb).")
]


@app.command()
def history(
    index: Annotated[
        list[Path] | None, typer.Option(help="Index these run folders (or folders of runs) first.")
    ] = None,
    rebuild: Annotated[bool, typer.Option(help="With --index: empty the store first.")] = False,
    store: StoreOpt = None,
    suite: Annotated[str | None, typer.Option(help="Runs whose task paths contain this.")] = None,
    task: Annotated[str | None, typer.Option(help="Runs with an episode of this task id.")] = None,
    agent: Annotated[str | None, typer.Option(help="Runs with an episode of this agent kind.")] = None,
    model: Annotated[str | None, typer.Option(help="Runs with an episode of this model.")] = None,
    tag: Annotated[str | None, typer.Option(help="Runs with an episode of a task with this tag.")] = None,
    branch: Annotated[str | None, typer.Option(help="Runs of the suite on this git branch.")] = None,
    since: Annotated[datetime | None, typer.Option(help="Runs created on or after (UTC).")] = None,
    until: Annotated[datetime | None, typer.Option(help="Runs created before (UTC).")] = None,
    limit: Annotated[int, typer.Option(min=1, help="At most this many runs, newest first.")] = 50,
    tasks: Annotated[
        bool,
        typer.Option(
            "--tasks", help="Per task over the runs listed: flaky, never discriminating, item analysis."
        ),
    ] = False,
) -> None:
    """Index runs into the run store and list them (filters narrow), with their headline."""
    from coder_eval.store import RunFilter, index_runs, list_runs

    if rebuild and not index:
        raise typer.BadParameter("it rebuilds from the folders --index names", param_hint="'--rebuild'")
    with open_store(store, read_only=not index, rebuild=rebuild) as opened:
        if index:
            report = index_runs(opened, index)
            console.print(f"{opened.path}: {report.line()}", highlight=False, markup=False)
            for problem in report.problems:
                console.print(f"  {problem}", highlight=False, markup=False)
        chosen = RunFilter(suite, task, agent, model, tag, branch, None, utc(since), utc(until))
        listed = list_runs(opened, chosen, limit)
        if tasks:
            from coder_eval.cli.history_tasks import print_tasks
            from coder_eval.store import load_store

            print_tasks(load_store(opened, listed["run_id"].tolist()[::-1]))
        else:
            print_runs(listed)


def open_store(path: Path | None, *, read_only: bool, rebuild: bool) -> RunStore:
    """The store, opened; with ``rebuild``, emptied (a file that is not coder_eval's store moved
    aside first, and where it went printed)."""
    from coder_eval.store import RunStore

    if not rebuild:
        return RunStore.open(path, read_only=read_only)
    store, moved = RunStore.rebuild(path)
    if moved is not None:
        console.print(
            f"{store.path}: not a usable run store; moved aside to {moved}, rebuilding",
            highlight=False,
            markup=False,
        )
    return store


def utc(value: datetime | None) -> datetime | None:
    """A naive date or time from the command line, read as UTC."""
    if value is None or value.tzinfo is not None:
        return value
    from datetime import UTC

    return value.replace(tzinfo=UTC)


def print_runs(runs: pd.DataFrame) -> None:
    """The runs as a table (or that none matched)."""
    if runs.empty:
        out.print("no runs match", highlight=False)
        return
    table = Table(whole("run", map(str, runs["run_id"])), "created (UTC)", "status", "branch", "commit",
                  "episodes", "pass rate", "cost $", Column("headline", overflow="fold"), box=None,
                  pad_edge=False)  # fmt: skip
    for row in runs.itertuples():
        table.add_row(*map(escape, (
            str(row.run_id), f"{row.created_at:%Y-%m-%d %H:%M}", str(row.status), text(row.git_branch),
            text(row.git_commit)[:10], f"{row.n_valid}/{row.n_episodes}", number(row.pass_rate, "{:.2f}"),
            number(row.cost_usd, "{:.2f}"), text(row.headline_line) or "-",
        )))  # fmt: skip
    out.print(table, highlight=False)


def text(value: Any) -> str:
    """A table cell from a value that may be missing."""
    return "" if value is None or (isinstance(value, float) and math.isnan(value)) else str(value)


def number(value: Any, pattern: str) -> str:
    """A number formatted, or ``-`` when missing."""
    return "-" if value is None or (isinstance(value, float) and math.isnan(value)) else pattern.format(value)
