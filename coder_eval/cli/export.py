"""``coder-eval export``: write a run's trajectories in another format (ATIF)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from coder_eval.cli.app import app, out, warn
from coder_eval.errors import InputError, unknown_name

FORMATS = {"atif": "one Agent Trajectory Interchange Format JSON document per episode"}


@app.command()
def export(
    source: Annotated[Path, typer.Argument(help="A run directory (runs/latest) or one trajectory file.")],
    out_dir: Annotated[Path, typer.Option("--out", help="Folder for the exported files.")],
    format: Annotated[str, typer.Option("--format", help="atif: " + FORMATS["atif"] + ".")] = "atif",
) -> None:
    """Export every trajectory of a run, one file per episode."""
    if format not in FORMATS:
        raise InputError(unknown_name("export format", format, FORMATS))
    from coder_eval.interop.exporters.atif_export import export_atif

    result = export_atif(source, out_dir)
    warn(result.problems)
    out.print(f"exported {len(result.written)} trajectories ({format}) to {out_dir}", highlight=False)
