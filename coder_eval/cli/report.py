"""``coder-eval report``, and the reports ``run`` renders after its episodes.

After a run: ``run_report``; ``compare_report`` (the declared pair: the variant named ``baseline``,
else the first, against the first other) when the experiment has two or more variants;
``classification_report`` for each criterion that recorded labels (in
``reports/<run_id>/<criterion_id>/`` when there are several).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, NamedTuple

import typer
from rich.markup import escape

from coder_eval.cli.app import app, console, out
from coder_eval.errors import ExitCode, ReportError


def templates() -> list[str]:
    """The report templates' names (for completion)."""
    from coder_eval.report import TEMPLATES

    return sorted(TEMPLATES)


class ReportJob(NamedTuple):
    template: str
    params: dict[str, str]
    out_dir: Path | None = None


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
        Path | None, typer.Option("--out", help="Output folder (default reports/<run_id>).")
    ] = None,
) -> None:
    """Render a report notebook to HTML for one or more runs."""
    from coder_eval.report import parse_params, render_report

    result = render_report(run_dirs, template, parse_params(param or []), out_dir)
    if not result.ok:
        _failed(template, result.error, result.html_path)
        raise typer.Exit(ExitCode.REPORT_FAILED)
    out.print(f"report: {result.html_path}", highlight=False)


def _failed(template: str, error: str | None, html: Path) -> None:
    console.print(
        f"report {template} failed: {error}\nthe error is shown in {html}"
        "; an earlier report of the same name, if any, is kept",
        markup=False,
        highlight=False,
    )


def render_run_reports(run: Path, variants: list[str]) -> bool:
    """Render the after-run reports, printing each path; False when any failed (the run is kept)."""
    ok = True
    jobs = report_jobs(run, variants)
    names = ", ".join(job.template for job in jobs)
    console.print(f"rendering {len(jobs)} report(s) ({names}); this takes a while", highlight=False)
    for job in jobs:
        ok = _render(run, job) and ok
    return ok


def report_jobs(run: Path, variants: list[str]) -> list[ReportJob]:
    from coder_eval.report import REPORTS_DIR

    jobs = [ReportJob("run_report", {})]
    if len(variants) >= 2:  # the declared pair, as the headline line names it
        jobs.append(ReportJob("compare_report", {}))
    labelled = labelled_criteria(run)
    for criterion in labelled:
        folder = REPORTS_DIR / run.resolve().name / criterion if len(labelled) > 1 else None
        jobs.append(ReportJob("classification_report", {"criterion": criterion}, folder))
    return jobs


def labelled_criteria(run: Path) -> list[str]:
    """Criterion ids that recorded an expected or observed label in the run."""
    from coder_eval.analysis import load_runs
    from coder_eval.analysis.notebook import labelled_criterion_ids

    return labelled_criterion_ids(load_runs(run).criteria)


def _render(run: Path, job: ReportJob) -> bool:
    from coder_eval.report import render_report

    try:
        result = render_report([run], job.template, job.params, job.out_dir)
    except (ReportError, ImportError) as exc:
        console.print(f"[red]report {job.template} failed:[/red] {escape(str(exc))}", highlight=False)
        return False
    if not result.ok:
        _failed(job.template, result.error, result.html_path)
        return False
    out.print(f"report: {result.html_path}", highlight=False)
    return True
