"""``coder-eval view``: the explorer in a browser, one command, runs preloaded.

Example::

    coder-eval view                        # every run under runs/, the newest selected
    coder-eval view runs/a runs/b --port 8866 --no-browser
    # explorer: http://127.0.0.1:8866/?token=…   (a request without the token is refused)
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Annotated

import typer

from coder_eval.cli.app import app, console, out
from coder_eval.errors import InputError
from coder_eval.lazy import without_iri_format
from coder_eval.version import pip_install


@app.command()
def view(
    run_dirs: Annotated[
        list[Path] | None,
        typer.Argument(
            help="Run directories, or folders of runs (default: runs/ or $RUNS_DIR, newest selected)."
        ),
    ] = None,
    port: Annotated[int, typer.Option(min=0, max=65535, help="Port on 127.0.0.1 (0: a free one).")] = 0,
    browser: Annotated[bool, typer.Option(help="Open the explorer in a web browser.")] = True,
) -> None:
    """Serve the explorer (paired comparison, flips, transcripts) on 127.0.0.1 and print its URL.

    The URL carries the token every request needs."""
    from coder_eval.experiment.settings import runs_root

    runs = checked_runs(run_dirs or [runs_root()])
    without_iri_format()
    try:
        from coder_eval.cli.viewer import serve
    except ImportError as exc:
        raise InputError(
            f"view needs Voila (the lab extra): {pip_install('lab')} ({exc.name} is missing)"
        ) from exc
    console.print(f"starting the explorer on {len(runs)} path(s); Ctrl-C stops it", highlight=False)
    with tempfile.TemporaryDirectory(prefix="coder-eval-view-") as folder:
        serve(runs, Path(folder), port, browser, announce=announce)


def announce(url: str) -> None:
    """The URL on one line (with its token: whoever holds it reads every run shown)."""
    out.print(f"explorer: {url}", markup=False, highlight=False, soft_wrap=True)


def checked_runs(paths: list[Path]) -> list[Path]:
    """The paths, if each is a run directory or a folder holding runs; InputError saying why not.

    The same rule as the explorer's ``discover_runs``, without importing the analysis stack here.
    """
    from coder_eval.experiment.settings import runs_root
    from coder_eval.run_dir import MANIFEST

    hint = " (run something first: coder-eval run ...)" if paths == [runs_root()] else ""
    for path in paths:
        is_run = (path / MANIFEST).is_file()
        if not is_run and not (path.is_dir() and any((p / MANIFEST).is_file() for p in path.iterdir())):
            raise InputError(f"{path}: not a run directory or a folder of runs{hint}")
    return paths
