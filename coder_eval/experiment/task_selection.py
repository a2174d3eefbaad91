"""Which tasks a run selects, once, on task ids, so that every variant runs the same tasks.

Example::

    select(tasks, Selection(tags=("api",), exclude_tags=("slow",), sample_tasks=20))   # a set of task ids
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from coder_eval.errors import ExperimentError
from coder_eval.task import TaskSpec
from coder_eval.task.dataset import SAMPLE_SEED


@dataclass(frozen=True)
class Selection:
    """Which tasks run: ``--tags`` (any of), ``--exclude-tags`` (none of), ``--sample-tasks N`` (seed
    SAMPLE_SEED); skipped tasks only with ``--include-skipped``. Which rows of each dataset task run:
    ``--split``, ``--sample N`` and ``--sample-per-stratum N`` (``coder_eval.task.rows``)."""

    tags: tuple[str, ...] = ()
    split: str | None = None
    sample: int | None = None
    exclude_tags: tuple[str, ...] = ()
    include_skipped: bool = False
    sample_per_stratum: int | None = None
    sample_tasks: int | None = None

    def dataset_layer(self) -> dict[str, int | str]:
        """The dataset fields the row options set (over each dataset task's own)."""
        given = {"split": self.split, "sample": self.sample, "sample_per_stratum": self.sample_per_stratum}
        return {key: value for key, value in given.items() if value is not None}


def select(tasks: Sequence[TaskSpec], selection: Selection) -> set[str]:
    """Task ids kept: not skipped (unless included), with any of the tags and none of the excluded
    ones, then a seeded sample (ids sorted first).

    Selecting no task at all is an ExperimentError naming what removed them.
    """
    steps = [f"{len(tasks)} loaded"]
    kept = [t for t in tasks if selection.include_skipped or not t.skip]
    steps.append(f"{len(kept)} {'with skipped ones' if selection.include_skipped else 'not skipped'}")
    if selection.tags:
        kept = [t for t in kept if set(selection.tags) & set(t.tags)]
        steps.append(f"{len(kept)} tagged {', '.join(selection.tags)}")
    if selection.exclude_tags:
        kept = [t for t in kept if not set(selection.exclude_tags) & set(t.tags)]
        steps.append(f"{len(kept)} without {', '.join(selection.exclude_tags)}")
    if selection.sample_tasks is not None:
        if selection.sample_tasks < 1:
            raise ExperimentError("--sample-tasks must be at least 1")
        ordered = sorted(kept, key=lambda t: t.task_id)
        kept = random.Random(SAMPLE_SEED).sample(ordered, min(selection.sample_tasks, len(ordered)))
    if not kept:
        raise ExperimentError(
            f"no task selected ({', '.join(steps)}): check the paths, --tags, --exclude-tags and skip flags"
        )
    return {t.task_id for t in kept}
