"""Which tasks a headline covers: the A/B comparison pools graded tasks, not classification items.

A task whose every criterion is a classification one (it records an expected or observed label,
like the rows of a skill-trigger dataset) measures a classifier, not whether the agent did the
work: by default it is left out of the pass-rate headline and reported with the classification
results. An experiment can narrow the headline further with ``compare: {tags, exclude_tags}``;
``coder-eval run`` records that block in run.json, and ``compare_selection`` reads it back.

Example::

    chosen = headline_tasks(runs.episodes, runs.criteria, tags=["api"])
    compare(chosen.episodes, "with_skill", "baseline")
    headline_of(runs)      # by the compare block recorded in run.json; compare(runs, ...) uses it
    chosen.description     # '5 tasks (tags: api); left out: 20 classification-only, 3 by tags'
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from coder_eval.analysis.frames.load import Runs
from coder_eval.analysis.stats.metrics import check_columns, renumbered
from coder_eval.errors import AnalysisError, ManifestError
from coder_eval.run_dir import MANIFEST, read_manifest


@dataclass(frozen=True)
class CompareSelection:
    """An experiment's ``compare:`` block: tasks with any of ``tags`` (all if none), less ``exclude_tags``."""

    tags: tuple[str, ...] = ()
    exclude_tags: tuple[str, ...] = ()


@dataclass(frozen=True)
class TaskSelection:
    """The episodes of the headline's tasks, and which tasks were left out and why.

    Example: ``headline_tasks(runs.episodes, runs.criteria).tasks``
    """

    episodes: pd.DataFrame
    tasks: list[str]
    classification_tasks: list[str]
    """Left out because every criterion of theirs is a classification one."""
    tag_excluded: list[str]
    """Left out by ``tags`` / ``exclude_tags``."""
    selection: CompareSelection

    @property
    def description(self) -> str:
        """One line saying which tasks the headline covers and which it leaves out."""
        rule = []
        if self.selection.tags:
            rule.append("tags: " + ", ".join(self.selection.tags))
        if self.selection.exclude_tags:
            rule.append("not tagged " + ", ".join(self.selection.exclude_tags))
        text = f"{len(self.tasks)} tasks" + (f" ({'; '.join(rule)})" if rule else "")
        left = [f"{len(self.classification_tasks)} classification-only"] if self.classification_tasks else []
        left += [f"{len(self.tag_excluded)} by tags"] if self.tag_excluded else []
        return text + ("; left out: " + ", ".join(left) if left else "")


def classification_only_tasks(criteria: pd.DataFrame) -> list[str]:
    """Tasks whose every criterion row carries an expected or observed label.

    Example: ``classification_only_tasks(runs.criteria)`` -> ``['skill-triggers--r01', ...]``
    """
    check_columns(criteria, ["task_id", "expected_label", "observed_label"], "criteria")
    if criteria.empty:
        return []
    labelled = criteria["expected_label"].notna() | criteria["observed_label"].notna()
    every = labelled.groupby(criteria["task_id"].to_numpy()).all()
    return sorted(str(t) for t in every[every].index)


def headline_tasks(
    episodes: pd.DataFrame,
    criteria: pd.DataFrame | None = None,
    tags: Sequence[str] = (),
    exclude_tags: Sequence[str] = (),
    include_classification: bool = False,
) -> TaskSelection:
    """The episodes of the tasks an A/B headline pools.

    Left out: classification-only tasks (unless ``include_classification``), tasks without any of
    ``tags`` (when given) and tasks with any of ``exclude_tags``. Example::

        headline_tasks(runs.episodes, runs.criteria, exclude_tags=["flaky"]).description
    """
    episodes = renumbered(episodes)
    check_columns(episodes, ["task_id"])
    selection = CompareSelection(tuple(tags), tuple(exclude_tags))
    classification = (
        [] if include_classification or criteria is None else classification_only_tasks(renumbered(criteria))
    )
    task_tags = task_tag_sets(episodes)
    wanted = set(selection.tags)
    unwanted = set(selection.exclude_tags)
    by_tags = sorted(t for t, ts in task_tags.items() if (wanted and not ts & wanted) or ts & unwanted)
    dropped = set(classification) | set(by_tags)
    kept = episodes[~episodes["task_id"].isin(dropped)].reset_index(drop=True)
    tasks = sorted(str(t) for t in kept["task_id"].unique())
    present = set(task_tags)
    classified = [t for t in classification if t in present]
    return TaskSelection(kept, tasks, classified, [t for t in by_tags if t not in classification], selection)


def headline_of(
    runs: Runs,
    tags: Sequence[str] | None = None,
    exclude_tags: Sequence[str] | None = None,
    include_classification: bool = False,
) -> TaskSelection:
    """``headline_tasks`` of loaded runs, by the ``compare:`` block their run.json records (``tags`` /
    ``exclude_tags`` replace it when given).

    Example: ``headline_of(load_runs("runs/latest")).description``
    """
    recorded = compare_selection(runs.run_dirs)
    return headline_tasks(
        runs.episodes,
        runs.criteria,
        recorded.tags if tags is None else tags,
        recorded.exclude_tags if exclude_tags is None else exclude_tags,
        include_classification,
    )


def task_tag_sets(episodes: pd.DataFrame) -> dict[str, set[str]]:
    """Every task's tags (the union over its episodes; none when the frame has no ``tags`` column)."""
    if "tags" not in episodes.columns:
        return {str(t): set() for t in episodes["task_id"].unique()}
    sets: dict[str, set[str]] = {}
    for task, tags in zip(episodes["task_id"], episodes["tags"], strict=True):
        sets.setdefault(str(task), set()).update(tags if isinstance(tags, list | tuple | set) else [])
    return sets


def recorded_variants(run_dirs: Iterable[str | os.PathLike[str]]) -> list[str]:
    """The variants in the order the runs' manifests list them (the experiment's order), each once.

    Example: ``recorded_variants(["runs/latest"])`` -> ``['baseline', 'with_skill']``
    """
    order: dict[str, None] = {}
    for run in run_dirs:
        try:
            order.update(dict.fromkeys(read_manifest(Path(run)).variants))
        except ManifestError:
            continue
    return list(order)


def compare_selection(run_dirs: Iterable[str | os.PathLike[str]]) -> CompareSelection:
    """The ``compare:`` block recorded in the runs' manifests (run.json); empty when none recorded one.

    Runs that recorded different blocks are an error: a headline must cover one set of tasks.
    Example: ``compare_selection(["runs/latest"]).tags``
    """
    found: set[CompareSelection] = set()
    for run in run_dirs:
        manifest = Path(run) / MANIFEST
        if not manifest.is_file():
            continue
        try:
            experiment = read_manifest(Path(run)).experiment
        except ManifestError as exc:
            raise AnalysisError(str(exc)) from exc
        if experiment is None:
            found.add(CompareSelection())
            continue
        block = experiment.compare
        found.add(CompareSelection(tuple(block.tags), tuple(block.exclude_tags)))
    if len(found) > 1:
        raise AnalysisError(
            f"the runs record different compare blocks ({sorted(map(str, found))}); report them apart"
        )
    return found.pop() if found else CompareSelection()
