"""``load_runs``: run directories, ``runs/latest`` or trajectory files -> four pandas frames.

Example::

    runs = load_runs("runs/latest")
    runs.episodes.groupby("variant_id").passed.mean()
"""

from __future__ import annotations

import contextlib
import gc
import os
import warnings
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from coder_eval.analysis.frames.columns import CRITERIA, EPISODES, MESSAGES, TOOL_CALLS, Column, names
from coder_eval.analysis.frames.inspect import InspectVariant, inspect_episodes
from coder_eval.analysis.frames.rows import WARN_LIST_LIMIT, ParsedEpisode, drop_duplicates, parse_trajectory
from coder_eval.errors import AnalysisError
from coder_eval.interop.log_readers.inspect_files import inspect_logs_in, is_inspect_log
from coder_eval.run_dir import EPISODES as EPISODES_DIR
from coder_eval.run_dir import MANIFEST

PathLike = str | os.PathLike[str]
PathArg = PathLike | Iterable[PathLike]


@dataclass(frozen=True)
class Runs:
    """The four frames of one or more runs; columns are declared in ``coder_eval.analysis.frames.columns``.

    Example: ``runs = load_runs("runs/latest"); runs.episodes.shape``
    """

    episodes: pd.DataFrame
    """One row per episode (``columns.EPISODES``)."""
    criteria: pd.DataFrame
    """One row per (episode, criterion) (``columns.CRITERIA``)."""
    tool_calls: pd.DataFrame
    """One row per tool call (``columns.TOOL_CALLS``)."""
    messages: pd.DataFrame
    """One row per message (``columns.MESSAGES``)."""
    run_dirs: tuple[Path, ...] = ()
    """The run directories loaded (with ``run.json``): where the declared comparison is recorded."""


def load_runs(*paths: PathArg, inspect_variant: InspectVariant = "model") -> Runs:
    """Load run directories (``runs/<id>``, ``runs/latest``), trajectory files, or lists of them.

    An incomplete trajectory (truncated last line, no ``episode_end``) becomes an episode with outcome
    ``invalid`` and status ``interrupted``, with a warning; another schema version raises
    ``TrajectoryError``. Inspect AI eval logs (``.eval``, ``.json``, or a folder of them) load too,
    one episode per sample and epoch; ``inspect_variant`` says what of theirs is the variant.

    Example::

        runs = load_runs("runs/latest", ["runs/a/episodes/t--base--r0.jsonl"])
    """
    files = trajectory_files(paths)
    run_dirs = tuple(
        dict.fromkeys(Path(p).resolve() for p in flatten(paths) if (Path(p) / MANIFEST).is_file())
    )
    with collector_paused():
        parsed = drop_duplicates([p for f in files for p in parse_file(f, inspect_variant)])
        warn_problems(parsed)
        return Runs(
            episodes=frame([p.episode for p in parsed], EPISODES),
            criteria=frame([r for p in parsed for r in p.criteria], CRITERIA),
            tool_calls=frame([r for p in parsed for r in p.tool_calls], TOOL_CALLS),
            messages=frame([r for p in parsed for r in p.messages], MESSAGES),
            run_dirs=run_dirs,
        )


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cycle collector off for the block (as it was after).

    Parsing makes millions of dicts and tuples that all stay alive, and none is part of a cycle:
    each collection would walk every one of them again for nothing (a fifth of the load time on
    100,000 trajectories).
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def trajectory_files(paths: Sequence[PathArg]) -> list[Path]:
    """Every trajectory file named by ``paths``, each once, in a stable order."""
    if not paths:
        raise AnalysisError("load_runs needs at least one path: a run directory or a trajectory file")
    seen: dict[Path, None] = {}
    for item in flatten(paths):
        for file in files_of(Path(item).resolve()):
            seen.setdefault(file, None)
    return list(seen)


def flatten(paths: Iterable[PathArg]) -> Iterable[PathLike]:
    """Paths from nested lists: ``flatten(["a", ["b"]])`` yields ``"a", "b"``."""
    for item in paths:
        if isinstance(item, str | os.PathLike):
            yield item
        else:
            yield from flatten(item)


def files_of(path: Path) -> list[Path]:
    """The trajectories of one path: a file itself, a run directory's episodes, or a folder's *.jsonl."""
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise AnalysisError(f"{path}: no such run directory or trajectory file")
    if (path / MANIFEST).is_file() or (path / EPISODES_DIR).is_dir():
        return sorted((path / EPISODES_DIR).glob("*.jsonl"))
    files = sorted(path.glob("*.jsonl")) or inspect_logs_in(path)
    if not files:
        raise AnalysisError(
            f"{path}: not a run directory (no {MANIFEST}) and holds no *.jsonl trajectories "
            "nor Inspect AI logs (*.eval, *.json)"
        )
    return files


def parse_file(path: Path, inspect_variant: InspectVariant) -> list[ParsedEpisode]:
    """The episodes of one file: a trajectory is one; an Inspect log has one per sample and epoch."""
    return inspect_episodes(path, inspect_variant) if is_inspect_log(path) else [parse_trajectory(path)]


def warn_problems(parsed: list[ParsedEpisode]) -> None:
    """One warning naming the trajectories that were incomplete or had unreadable lines."""
    bad = [f"{p.episode['path']} ({'; '.join(p.problems)})" for p in parsed if p.problems]
    if bad:
        listed = ", ".join(bad[:WARN_LIST_LIMIT]) + (" ..." if len(bad) > WARN_LIST_LIMIT else "")
        warnings.warn(
            f"{len(bad)} trajectories are incomplete or damaged; one without episode_end is read as "
            f"outcome 'invalid', status 'interrupted': {listed}",
            stacklevel=3,
        )


def frame(
    rows: list[dict[str, object]] | list[tuple[object, ...]], columns: tuple[Column, ...]
) -> pd.DataFrame:
    """A frame with exactly the declared columns and dtypes."""
    df = pd.DataFrame.from_records(rows, columns=names(columns))
    return df.astype({c.name: c.dtype for c in columns})
