"""Which definition of a task re-grades an episode: the task file as it is now, or the recorded one.

Example::

    definitions = TaskDefinitions.load([Path("tasks/demo/media_limits.yaml")])
    graded = definitions.for_episode(start)   # start: the recorded episode_start
    graded.source, graded.task.criterion_ids()  # ('task_file', ['0-recorded_calls', ...])

The recorded task (``episode_start.task``) is the base either way: it is what the agent ran with,
experiment layers and dataset rows applied. A task file given to ``regrade`` replaces what grading
reads (the fields the schema marks as grading: ``success_criteria``, ``post_run``, ``suite_thresholds``,
``hidden_tests``, ``reference``) for the tasks it defines; other episodes keep their recorded criteria.
The recording leaves hidden material out (the fields marked hidden: the reference solution, hidden
tests, the reference folder), so for those it is taken from the task's file on disk.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import ValidationError

from coder_eval.errors import TaskError
from coder_eval.task import TaskSpec, load_tasks
from coder_eval.task.schema import GRADING_FIELDS, HIDDEN_FIELDS
from coder_eval.trajectory import EpisodeStart


@dataclass(frozen=True)
class GradingTask:
    """The task an episode is re-graded with, where its criteria came from, and notes about it."""

    task: TaskSpec
    source: Literal["recorded", "task_file"]
    task_file: str | None = None
    notes: tuple[str, ...] = ()


@dataclass
class TaskDefinitions:
    """The tasks of the files given to ``regrade`` (by id), and the recorded tasks' own files."""

    by_id: dict[str, TaskSpec]
    _files: dict[Path, dict[str, TaskSpec] | str] = field(default_factory=dict)

    @classmethod
    def load(cls, paths: Sequence[Path]) -> TaskDefinitions:
        """Load ``paths`` (task files or folders); ``TaskError`` for a malformed one, before anything runs."""
        return cls({task.task_id: task for task in load_tasks(paths)} if paths else {})

    def for_episode(self, start: EpisodeStart) -> GradingTask:
        """The task that re-grades the episode ``start`` opens; ``TaskError`` for an unreadable recording."""
        recorded = recorded_task(start)
        current = self.by_id.get(start.task_id)
        if current is None:
            hidden, notes = self._hidden_material(recorded)
            return GradingTask(recorded.model_copy(update=hidden), "recorded", notes=notes)
        task = _with_grading_of(recorded, current, start.episode_id)
        return GradingTask(task, "task_file", str(current.source_path) if current.source_path else None)

    def unused(self, task_ids: set[str]) -> list[str]:
        """Tasks of the given files that no episode of the run ran."""
        return sorted(set(self.by_id) - task_ids)

    def _hidden_material(self, recorded: TaskSpec) -> tuple[dict[str, Any], tuple[str, ...]]:
        path = recorded.source_path
        if path is None:
            return {}, ()
        if path not in self._files:
            try:
                self._files[path] = {t.task_id: t for t in load_tasks([path])}
            except TaskError as exc:
                self._files[path] = str(exc).splitlines()[0]
        found = self._files[path]
        if isinstance(found, str) or recorded.task_id not in found:
            why = found if isinstance(found, str) else f"it no longer defines {recorded.task_id!r}"
            return {}, (f"hidden tests and reference not read again from {path}: {why}",)
        source = found[recorded.task_id]
        return {name: getattr(source, name) for name in HIDDEN_FIELDS}, ()


def recorded_task(start: EpisodeStart) -> TaskSpec:
    """The task an episode recorded (``episode_start.task``) as a ``TaskSpec`` again."""
    data = dict(start.task)
    if data.get("initial_prompt") is not None:
        data["initial_prompt_file"] = None  # the loader read the file into initial_prompt
    try:
        return TaskSpec.model_validate(data)
    except ValidationError as exc:
        raise TaskError(
            f"episode {start.episode_id}: the recorded task no longer validates ({exc.error_count()} "
            f"errors, first: {exc.errors()[0]['msg']}); give its task file to regrade"
        ) from exc


def _with_grading_of(recorded: TaskSpec, current: TaskSpec, episode_id: str) -> TaskSpec:
    """The recorded task with the grading fields of ``current``, checked as a whole (a threshold or a
    shim a criterion names must exist in the recorded task)."""
    data = {
        **recorded.model_dump(mode="json"),
        **current.model_dump(mode="json", include=set(GRADING_FIELDS)),
        "initial_prompt_file": None,
    }
    try:
        TaskSpec.model_validate(data)
    except ValidationError as exc:
        raise TaskError(
            f"episode {episode_id}: the criteria of {current.source_path} do not fit the task the "
            f"episode ran: {exc.errors()[0]['msg']}"
        ) from exc
    return recorded.model_copy(update={name: getattr(current, name) for name in GRADING_FIELDS})
