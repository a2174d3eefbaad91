"""Experiment files and task suites for the experiment tests."""

from __future__ import annotations

import textwrap
from pathlib import Path

from coder_eval.experiment import (
    CommandLine,
    Resolution,
    Selection,
    default_experiment,
    load_experiment,
    resolve,
)
from tests.helpers import minimal_task, write_task


def write_experiment(folder: Path, body: str, name: str = "experiment.yaml") -> Path:
    """Write an experiment file (dedented) into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(textwrap.dedent(body).lstrip(), encoding="utf-8")
    return path


def two_tasks(folder: Path) -> Path:
    """Two oracle-passable tasks, ``a`` and ``b``, in ``folder/tasks``."""
    minimal_task(folder / "tasks", "a", extra="tags: [x]\n")
    minimal_task(folder / "tasks", "b", extra="tags: [y]\n")
    return folder / "tasks"


def word_dataset(folder: Path, extra: str = "") -> Path:
    """A dataset task: six rows in two strata (``kind``) and two splits."""
    rows = "\n".join(
        f"    - {{id: r{i}, word: w{i}, kind: k{1 if i < 4 else 2}, split: {'train' if i % 2 else 'test'}}}"
        for i in range(6)
    )
    body = f"""
task_id: words
initial_prompt: "Write ${{row.word}} to out.txt"
dataset:
  rows:
{rows}
success_criteria:
  - {{type: file_contains, path: out.txt, includes: ["${{row.word}}"]}}
"""
    return write_task(folder / "data", body + textwrap.dedent(extra), "words.yaml")


def resolved(
    paths: list[Path],
    experiment: Path | None = None,
    command_line: CommandLine = CommandLine(),
    selection: Selection = Selection(),
) -> Resolution:
    """``resolve`` with the built-in default experiment unless a file is given."""
    chosen = load_experiment(experiment) if experiment else default_experiment()
    return resolve(chosen, paths, command_line, selection)
