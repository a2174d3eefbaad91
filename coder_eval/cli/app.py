"""The typer app, its two consoles, and the one place errors become exit codes."""

from __future__ import annotations

import sys

import typer
from rich.console import Console

from coder_eval.errors import CoderEvalError, ExitCode, InputError, ReportError

app = typer.Typer(
    add_completion=False, no_args_is_help=True, help="Evaluate AI coding agents on task suites."
)
console = Console(stderr=True)
"""Progress, warnings and errors."""
out = Console()
"""Results: tables and paths."""

INPUT_ERRORS = (InputError, ReportError)
"""Errors that mean the input was wrong (exit 2); any other CoderEvalError exits 1."""


def main() -> None:
    """Entry point: run the app, mapping coder_eval errors to exit codes once, here."""
    try:
        code = app(standalone_mode=False)
    except CoderEvalError as exc:
        console.print(f"[red]error:[/red] {exc}", markup=True, highlight=False, soft_wrap=True)
        sys.exit(ExitCode.INVALID_INPUT if isinstance(exc, INPUT_ERRORS) else 1)
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


def warn(lines: list[str]) -> None:
    for line in lines:
        console.print(f"[yellow]warning:[/yellow] {line}", markup=True, highlight=False, soft_wrap=True)
