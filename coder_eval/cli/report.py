"""``coder-eval report``, and how the reports ``run`` renders after its episodes are printed
(``coder_eval.run.reports`` says which they are).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from coder_eval.cli.app import app, console, out
from coder_eval.errors import ExitCode


def templates() -> list[str]:
    """The report templates' names (for completion)."""
    from coder_eval.run.render import TEMPLATES

    return sorted(TEMPLATES)


if TYPE_CHECKING:
    from coder_eval.run.reports import ReportOutcome


@app.command()
def report(
    run_dirs: Annotated[list[Path], typer.Argument(help="Run directories (runs/<run_id>, runs/latest).")],
    template: Annotated[
        str,
        typer.Option("--template", "-t", help="Report template.", autocompletion=templates),
    ] = "run_report",
    param: Annotated[
        list[str] | None, typer.Option("--param", "-p", help="Template parameter KEY=VALUE.")
    ] = None,
    out_dir: Annotated[
        Path | None,
        typer.Option(
            "--out", help="Output folder (default reports/<run_id>); markdown: the file (default stdout)."
        ),
    ] = None,
    format_: Annotated[
        str,
        typer.Option("--format", help="html (a report notebook) or markdown (a summary for CI)."),
    ] = "html",
    baseline: Annotated[
        str | None,
        typer.Option(metavar="RUN", help="Markdown: against this run (folder, run id, latest-on-BRANCH)."),
    ] = None,
    store: Annotated[Path | None, typer.Option(help="Markdown: the run store --baseline reads.")] = None,
    link_base: Annotated[
        str | None,
        typer.Option(
            help="Markdown: a URL the report links start with, or with {path} where each report's "
            "path goes (a CI artifact's: URL#{path})."
        ),
    ] = None,
) -> None:
    """Render a report notebook to HTML for one or more runs."""
    from coder_eval.run.render import parse_params, render_report

    if format_ not in ("html", "markdown"):
        raise typer.BadParameter(f"{format_!r}: choose html or markdown", param_hint="'--format'")
    if format_ == "markdown":
        _markdown(run_dirs, baseline, store, link_base, out_dir)
        return

    result = render_report(run_dirs, template, parse_params(param or []), out_dir)
    if not result.ok:
        _failed(template, result.error, result.html_path)
        raise typer.Exit(ExitCode.REPORT_FAILED)
    out.print(f"report: {result.html_path}", highlight=False)


def _markdown(
    run_dirs: list[Path],
    baseline: str | None,
    store: Path | None,
    link_base: str | None,
    out_file: Path | None,
) -> None:
    """The Markdown summary of one run, printed or written to ``out_file``."""
    from coder_eval.analysis.views.markdown import run_markdown
    from coder_eval.store.baseline_ref import check_reference, compare_with_baseline
    from coder_eval.store.connection import store_for

    if len(run_dirs) != 1:
        raise typer.BadParameter("markdown summarizes one run", param_hint="'RUN_DIRS'")
    run = run_dirs[0]
    regression, note = None, None
    if baseline is not None:
        history = store_for(run.resolve(), store)
        check_reference(baseline, history)
        regression, _, note = compare_with_baseline(run, baseline, history)
    text = run_markdown(run, regression, link_base, baseline_note=note)
    if out_file is None:
        sys.stdout.write(text)
        return
    out_file.write_text(text, encoding="utf-8")
    console.print(f"summary: {out_file}", highlight=False, markup=False)


def _failed(template: str, error: str | None, html: Path) -> None:
    console.print(
        f"report {template} failed: {error}\nthe error is shown in {html}"
        "; an earlier report of the same name, if any, is kept",
        markup=False,
        highlight=False,
    )


def print_run_reports(run: Path, variants: list[str]) -> bool:
    """Render the after-run reports, printing each path; False when any failed (the run is kept)."""
    from coder_eval.run.reports import render_run_reports

    outcomes = render_run_reports(run, variants, announce_reports)
    print_report_outcomes(outcomes)
    return all(o.ok for o in outcomes)


def announce_reports(templates: list[str]) -> None:
    console.print(
        f"rendering {len(templates)} report(s) ({', '.join(templates)}); this takes a while", highlight=False
    )


def print_report_outcomes(outcomes: Sequence[ReportOutcome]) -> None:
    """Each report's page, or why it failed."""
    for o in outcomes:
        if o.raised:
            console.print(f"[red]report {o.template} failed:[/red] {escape(str(o.error))}", highlight=False)
        elif not o.ok:
            _failed(o.template, o.error, o.html_path or Path())
        elif o.kept:
            out.print(f"report: {o.html_path} (kept: no episode ran since it was rendered)", highlight=False)
        else:
            out.print(f"report: {o.html_path}", highlight=False)
