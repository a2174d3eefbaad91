"""``coder-eval show``: print an episode's transcript, top to bottom, or follow a running one.

Example::

    coder-eval show runs/latest fix-calc-bug--default--r0
    coder-eval show runs/latest --follow          # the whole run as it is written, until it stops
    coder-eval show runs/latest fix-calc-bug--default--r0 --follow    # one episode, until it ends
    coder-eval show runs/new --follow --wait 120  # started first: waits for a run to begin there
"""

from __future__ import annotations

import difflib
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from coder_eval.cli.app import app, console, out
from coder_eval.errors import InputError

if TYPE_CHECKING:
    from coder_eval.run_dir import RunDir

POLL_S = 0.2
"""How often ``--follow`` looks for new lines."""
WAIT_S = 60.0
"""How long ``--follow`` waits, by default, for a run to start writing a folder that has no run.json."""
NEAREST = 5
"""How many episode ids an unknown id's message suggests."""


@app.command()
def show(
    target: Annotated[Path, typer.Argument(help="A trajectory file, or a run directory (runs/latest).")],
    episode: Annotated[str | None, typer.Argument(help="Episode id, with a run directory.")] = None,
    follow: Annotated[
        bool,
        typer.Option(
            "--follow",
            "-f",
            help="Print events as they are written: one episode until it ends, or with a run directory "
            "and no episode the whole run until it stops (Ctrl-C stops).",
        ),
    ] = False,
    wait: Annotated[
        float,
        typer.Option(
            min=0,
            metavar="SECONDS",
            help="With --follow: how long to wait for a run to start writing a "
            "folder that has no run.json yet (started before the run).",
        ),
    ] = WAIT_S,
) -> None:
    """Print an episode's transcript: messages, tool calls and results, verdicts, outcome."""
    from coder_eval.cli.summary import print_not_passed, print_totals, shown_path
    from coder_eval.run_dir import RunDir
    from coder_eval.transcript import transcript_text

    if not follow:
        path = trajectory_path(target, episode)
        out.print(transcript_text(path), markup=False, highlight=False, soft_wrap=True)
        return
    if not target.is_file():
        wait_for_run(target, wait, announce=lambda text: console.print(text, highlight=False, markup=False))
    if not target.is_file() and episode is None:
        run = RunDir.open(target)
        console.print(f"following the run {shown_path(run.path)}", highlight=False)
        for text in follow_run(run):
            out.print(text, markup=False, highlight=False, soft_wrap=True)
        print_not_passed(run, print_totals(run))
        return
    path, stopped = _followed(target, episode)
    console.print(f"following {path}", highlight=False)
    for text in follow_transcript(path, stopped):
        out.print(text, markup=False, highlight=False, soft_wrap=True)


def wait_for_run(
    target: Path,
    timeout: float,
    announce: Callable[[str], None] = lambda text: None,
    poll_s: float = POLL_S,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> None:
    """Return once ``target`` holds a run's manifest (a run started there), waiting up to ``timeout``
    seconds; ``InputError`` (exit 2) saying what to do when none appears.

    Example: ``wait_for_run(Path("runs/new"), 60)`` returns as soon as ``runs/new/run.json`` exists.
    """
    from coder_eval.run_dir import MANIFEST

    manifest = target / MANIFEST
    if manifest.is_file():
        return
    if target.exists() and not target.is_dir():
        raise InputError(f"{target}: not a run folder")
    announce(f"waiting up to {timeout:g} s for a run to start in {target} (no {MANIFEST} yet)")
    deadline = clock() + timeout
    while not manifest.is_file():
        if clock() >= deadline:
            raise InputError(
                f"{target}: no run started there within {timeout:g} s (no {MANIFEST}); start one with "
                f"`coder-eval run ... --run-dir {target}`, or give --wait more seconds"
            )
        sleep(poll_s)


def _followed(target: Path, episode: str | None) -> tuple[Path, Callable[[], bool]]:
    """The one trajectory to follow, and what says its run stopped (a file alone: nothing)."""
    from coder_eval.run_dir import RunDir

    if target.is_file() or episode is None:
        return target, lambda: False
    run = RunDir.open(target)
    return running_path(target, episode), lambda: not run_is_live(run)


def run_is_live(run: RunDir) -> bool:
    """A process is writing the run (its manifest says ``running`` and its lock is held)."""
    from coder_eval.run_lock import RunLock

    return run.read_manifest().status == "running" and RunLock.holder(run.path) is not None


def trajectory_path(target: Path, episode: str | None) -> Path:
    """The trajectory a ``show`` argument names; InputError suggesting the nearest ids otherwise."""
    from coder_eval.run_dir import RunDir

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


def running_path(target: Path, episode: str) -> Path:
    """The trajectory of a named episode to follow (planned, perhaps not started yet)."""
    from coder_eval.run_dir import RunDir

    run = RunDir.open(target)
    planned = [e.episode_id for e in run.read_manifest().episodes]
    if episode not in planned:
        raise InputError(f"{target}: {unknown_episode(episode, planned)}")
    return run.episode_path(episode)


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
    tail = Tail(path)
    while not tail.ended:
        lines = tail.read()
        yield from lines
        if not lines:
            sleep(poll_s)


def follow_run(
    run: RunDir, poll_s: float = POLL_S, sleep: Callable[[float], None] = time.sleep
) -> Iterator[str]:
    """Every episode of ``run`` as it is written, each line after its episode id, until the run is no
    longer running and every trajectory is read to its end. An episode that had ended before
    following began shows its verdict only."""
    ended_before = set(run.finished_episodes())
    tails: dict[Path, Tail] = {}
    while True:
        running = run_is_live(run)
        quiet = True
        for path in run.trajectory_paths():
            tail = tails.setdefault(path, Tail(path, verdict_only=path.stem in ended_before))
            for text in tail.read():
                quiet = False
                yield "\n".join(f"{path.stem}: {line}" for line in text.split("\n"))
        if quiet and not running:
            return
        if quiet:
            sleep(poll_s)


class Tail:
    """The complete lines appended to a trajectory since the last :meth:`read`, as transcript text."""

    def __init__(self, path: Path, verdict_only: bool = False) -> None:
        self.path = path
        self.verdict_only = verdict_only
        self.offset = 0
        self.ended = False

    def read(self) -> list[str]:
        """Each complete new line described (``verdict_only``: only the ``episode_end``)."""
        if self.ended or not self.path.exists():
            return []
        with self.path.open("rb") as stream:
            stream.seek(self.offset)
            data = stream.read()
        complete = data[: data.rfind(b"\n") + 1]
        texts, start = [], self.offset
        self.offset += len(complete)
        for line in complete.split(b"\n"):
            line_start, start = start, start + len(line) + 1
            if not line.strip():
                continue
            text, self.ended = _describe_line(line, line_start)
            if self.ended or not self.verdict_only:
                texts.append(text)
            if self.ended:
                break
        return texts


def _describe_line(line: bytes, offset: int) -> tuple[str, bool]:
    from pydantic import ValidationError

    from coder_eval.trajectory import EVENT_ADAPTER, EpisodeEnd, parse_line
    from coder_eval.transcript import describe

    try:
        event = EVENT_ADAPTER.validate_python(parse_line(line.decode("utf-8")))
    except UnicodeDecodeError as exc:  # a write cut inside a character: unreadable, like a cut line
        return f"! unreadable line (not UTF-8 at byte {offset + exc.start})", False
    except (ValueError, ValidationError, RecursionError) as exc:  # JSONDecodeError is a ValueError
        return f"! unreadable line ({type(exc).__name__} at byte {offset})", False
    return describe(event), isinstance(event, EpisodeEnd)
