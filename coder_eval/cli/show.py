"""``coder-eval show``: print an episode's transcript, top to bottom, or follow a running one.

Example::

    coder-eval show runs/latest fix-calc-bug--default--r0
    coder-eval show runs/latest --follow          # the episode the run is writing now
"""

from __future__ import annotations

import difflib
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Annotated

import typer
from pydantic import ValidationError

from coder_eval.cli.app import app, console, out
from coder_eval.errors import InputError
from coder_eval.run_dir import RunDir
from coder_eval.run_lock import RunLock
from coder_eval.trajectory import EVENT_ADAPTER, EpisodeEnd, parse_line
from coder_eval.transcript import describe, transcript_text

POLL_S = 0.2
"""How often ``--follow`` looks for new lines."""
NEAREST = 5
"""How many episode ids an unknown id's message suggests."""


@app.command()
def show(
    target: Annotated[Path, typer.Argument(help="A trajectory file, or a run directory (runs/latest).")],
    episode: Annotated[str | None, typer.Argument(help="Episode id, with a run directory.")] = None,
    follow: Annotated[
        bool,
        typer.Option(
            "--follow", "-f", help="Print events as they are written, until the episode ends (Ctrl-C stops)."
        ),
    ] = False,
) -> None:
    """Print an episode's transcript: messages, tool calls and results, verdicts, outcome."""
    if not follow:
        path = trajectory_path(target, episode)
        out.print(transcript_text(path), markup=False, highlight=False, soft_wrap=True)
        return
    path = target if target.is_file() else running_path(target, episode)
    console.print(f"following {path}", highlight=False)
    run = None if target.is_file() else RunDir.open(target)
    stopped = (lambda: not run_is_live(run)) if run else (lambda: False)
    for text in follow_transcript(path, stopped):
        out.print(text, markup=False, highlight=False, soft_wrap=True)


def run_is_live(run: RunDir) -> bool:
    """A process is writing the run (its manifest says ``running`` and its lock is held)."""
    return run.read_manifest().status == "running" and RunLock.holder(run.path) is not None


def trajectory_path(target: Path, episode: str | None) -> Path:
    """The trajectory a ``show`` argument names; InputError suggesting the nearest ids otherwise."""
    if target.is_file():
        return target
    run = RunDir.open(target)
    ids = [p.stem for p in run.trajectory_paths()]
    if episode is None:
        raise InputError(
            f"{target}: name an episode (it has {len(ids)}), e.g. {', '.join(ids[:3]) or 'none yet'}"
        )
    if episode not in ids:
        raise InputError(f"{target}: {unknown_episode(episode, ids)}")
    return run.episode_path(episode)


def unknown_episode(episode: str, ids: list[str]) -> str:
    """``no episode 'x'; nearest: a, b (12 in the run)``: the closest ids, never the whole list."""
    nearest = difflib.get_close_matches(episode, ids, n=NEAREST, cutoff=0.0)
    hint = f"; nearest: {', '.join(nearest)}" if nearest else ""
    return f"no episode {episode!r}{hint} ({len(ids)} in the run)"


def running_path(target: Path, episode: str | None) -> Path:
    """The trajectory to follow: the named episode (planned, perhaps not started yet), else the
    unfinished one written to most recently."""
    run = RunDir.open(target)
    if episode is not None:
        planned = [e.episode_id for e in run.read_manifest().episodes]
        if episode not in planned:
            raise InputError(f"{target}: {unknown_episode(episode, planned)}")
        return run.episode_path(episode)
    finished = run.finished_episodes()
    running = [p for p in run.trajectory_paths() if p.stem not in finished]
    if not running:
        raise InputError(f"{target}: no episode is running; name one to show it")
    return max(running, key=lambda p: p.stat().st_mtime)


def follow_transcript(
    path: Path,
    stopped: Callable[[], bool] = lambda: False,
    poll_s: float = POLL_S,
    sleep: Callable[[float], None] = time.sleep,
) -> Iterator[str]:
    """Transcript lines of ``path`` as they are written, ending after ``episode_end``.

    Waits for the file to appear, unless ``stopped()`` says the run is over; a line is read only once
    it is complete (ends in a newline).
    """
    while not path.exists():
        if stopped():
            raise InputError(f"{path.stem}: the run is not running and never started this episode")
        sleep(poll_s)
    with path.open("rb") as stream:
        pending, offset = b"", 0
        while True:
            chunk = stream.readline()
            if not chunk:
                sleep(poll_s)
                continue
            pending += chunk
            if not pending.endswith(b"\n"):
                continue
            line, pending = pending, b""
            start, offset = offset, offset + len(line)
            if not line.strip():
                continue
            text, ended = _describe_line(line, start)
            yield text
            if ended:
                return


def _describe_line(line: bytes, offset: int) -> tuple[str, bool]:
    try:
        event = EVENT_ADAPTER.validate_python(parse_line(line.decode("utf-8")))
    except UnicodeDecodeError as exc:  # a write cut inside a character: unreadable, like a cut line
        return f"! unreadable line (not UTF-8 at byte {offset + exc.start})", False
    except (ValueError, ValidationError, RecursionError) as exc:  # JSONDecodeError is a ValueError
        return f"! unreadable line ({type(exc).__name__} at byte {offset})", False
    return describe(event), isinstance(event, EpisodeEnd)
