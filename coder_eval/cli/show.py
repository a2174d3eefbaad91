"""``coder-eval show``: print an episode's transcript, top to bottom."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from coder_eval.cli.app import app, out
from coder_eval.errors import InputError, unknown_name
from coder_eval.run_dir import RunDir
from coder_eval.transcript import transcript_text


@app.command()
def show(
    target: Annotated[Path, typer.Argument(help="A trajectory file, or a run directory (runs/latest).")],
    episode: Annotated[str | None, typer.Argument(help="Episode id, with a run directory.")] = None,
) -> None:
    """Print an episode's transcript: messages, tool calls and results, verdicts, outcome."""
    out.print(
        transcript_text(trajectory_path(target, episode)), markup=False, highlight=False, soft_wrap=True
    )


def trajectory_path(target: Path, episode: str | None) -> Path:
    """The trajectory a ``show`` argument names; the episode ids when a run directory has no episode."""
    if target.is_file():
        return target
    run = RunDir.open(target)
    ids = [p.stem for p in run.trajectory_paths()]
    if episode is None:
        raise InputError(f"{target}: name one of its {len(ids)} episodes: {', '.join(ids[:20])}")
    if episode not in ids:
        raise InputError(f"{target}: {unknown_name('episode', episode, ids)}")
    return run.episode_path(episode)
