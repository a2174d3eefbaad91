"""An episode the harness failed while running still ends: its trajectory gets an ``episode_end``.

Example::

    end = salvage(run.episode_path(episode_id), start_event(plan, run_id), exc)
    end.outcome, end.status, end.invalid_cause     # ('invalid', 'infra_error', 'harness')

``run_batch`` calls it for any error that escaped an episode (an event that could not be written as
JSON, a sandbox or server that failed to close in a way nobody foresaw, a bug), so one episode can
never end the batch: it is recorded as not measured, the others finish, and the run is completed.
``--resume`` runs it again (the harness, not the agent, failed). A trajectory that already ended
keeps its own ``episode_end``; what was written before the error is kept as it is.
"""

from __future__ import annotations

import os
from pathlib import Path

from coder_eval.errors import CoderEvalError, RunWriteError, TrajectoryError
from coder_eval.trajectory import EpisodeEnd, EpisodeStart, read_trajectory


def salvage(path: Path, start: EpisodeStart, exc: BaseException) -> EpisodeEnd:
    """End the trajectory at ``path`` after ``exc`` escaped its episode (see the module docstring)."""
    try:
        trajectory = read_trajectory(path) if path.exists() else None
    except TrajectoryError:
        trajectory = None
    if trajectory is not None and trajectory.end is not None and not trajectory.complete:
        return trajectory.end  # written to after it ended: --resume sets it aside
    if trajectory is not None and trajectory.complete and trajectory.end is not None:
        return trajectory.end  # it had ended before the error
    why = str(exc) if isinstance(exc, CoderEvalError) else f"{type(exc).__name__}: {exc}"
    why = why.encode("utf-8", "backslashreplace").decode("utf-8")  # lone surrogates from file names
    end = EpisodeEnd(
        outcome="invalid",
        status="infra_error",
        invalid_cause="harness",
        error=f"the harness failed while running the episode: {why}",
    )
    lines = [] if trajectory is not None and trajectory.start is not None else [_start_line(start)]
    _append(path, [*lines, end.model_dump_json()])
    return end


def _start_line(start: EpisodeStart) -> str:
    """``start`` as JSON, or its keys alone when what it recorded cannot be written as JSON."""
    try:
        return start.model_dump_json()
    except Exception:
        keys = ("run_id", "episode_id", "task_id", "variant_id", "repeat", "seed")
        return EpisodeStart(**{k: getattr(start, k) for k in keys}).model_dump_json()


def _append(path: Path, lines: list[str]) -> None:
    """Add ``lines`` on lines of their own (after a cut last line too), synced to disk."""
    try:
        with path.open("ab") as handle:
            if handle.tell() > 0 and not _ends_with_newline(path):
                handle.write(b"\n")
            handle.write("".join(f"{line}\n" for line in lines).encode())
            handle.flush()
            os.fsync(handle.fileno())
    except OSError as exc:
        raise RunWriteError.of(path, exc) from exc


def _ends_with_newline(path: Path) -> bool:
    with path.open("rb") as handle:
        handle.seek(-1, os.SEEK_END)
        return handle.read(1) == b"\n"
