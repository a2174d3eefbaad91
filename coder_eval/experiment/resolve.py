"""From an experiment, task paths and command-line overrides to the episodes of a run.

Every task file is merged once per variant (``merge.py``), fanned out and validated
(``coder_eval.task.build_tasks``), its prompt mutated; then the tasks are selected once, on task ids,
so every variant runs exactly the same tasks and pairs on them.

Example::

    resolution = resolve(load_experiment(None), [Path("tasks/examples")], CommandLine(agent="oracle"))
    [p.episode_id for p in resolution.plans]
"""

from __future__ import annotations

import json
import warnings
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from coder_eval.agents.skill_sources import PluginPathWarning
from coder_eval.episode.plan import EpisodePlan
from coder_eval.errors import ExperimentError, InputError, TaskError
from coder_eval.experiment.merge import BUILTIN, SETTINGS, Layer, merge_layers, provenance, settle_agent
from coder_eval.experiment.mutations import mutate_prompt
from coder_eval.experiment.overrides import command_line_layer
from coder_eval.experiment.paths import loader_notes, plugin_origins
from coder_eval.experiment.rephrase import Rephraser, seed_for
from coder_eval.experiment.spec import Experiment, Variant
from coder_eval.experiment.task_selection import Selection, select
from coder_eval.plugins import check_plugins
from coder_eval.task import TaskSpec, build_tasks, discover, task_doc
from coder_eval.task.schema import HIDDEN_FIELDS
from coder_eval.yaml_source import YamlDoc

NOT_IN_PROVENANCE = {*HIDDEN_FIELDS, "source_path", "dataset_row"}


@dataclass(frozen=True)
class CommandLine:
    """The command line's layer: ``-D`` overrides and their shortcuts, and ``--repeats``."""

    defines: tuple[str, ...] = ()
    model: str | None = None
    agent: str | None = None
    repeats: int | None = None
    driver: str | None = None
    settings: Mapping[str, Any] = field(default_factory=dict)
    """The ``settings`` layer, under the variant and over the task: the ``DEFAULT_*`` settings of
    the environment and ``.env`` (``coder_eval.experiment.settings``)."""

    def layer(self) -> dict[str, Any]:
        shortcuts = {"--agent": self.agent, "--model": self.model, "--driver": self.driver}
        return command_line_layer(self.defines, shortcuts)


@dataclass(frozen=True)
class Suite:
    """The rows of one dataset task, with the task's ``suite_thresholds``."""

    name: str
    thresholds: dict[str, dict[str, float]]
    task_ids: tuple[str, ...]


@dataclass(frozen=True)
class SourceFile:
    """A task file as merged for the first variant, and the selected tasks it produced."""

    path: Path
    data: dict[str, Any]
    tasks: tuple[TaskSpec, ...]


@dataclass(frozen=True)
class Resolution:
    """What a run will do: the episodes, repeats per variant, suites to gate, and notes for ``plan``."""

    experiment: Experiment
    plans: list[EpisodePlan]
    repeats: dict[str, int]
    suites: list[Suite] = field(default_factory=list)
    sources: list[SourceFile] = field(default_factory=list)
    unmatched: list[tuple[str, str]] = field(default_factory=list)
    """(variant id, find) of prompt replacements that matched no selected task."""
    skipped: list[str] = field(default_factory=list)
    """Paths the task search left unopened (FIFOs, sockets, devices, symlink loops), with why."""
    notes: list[str] = field(default_factory=list)
    """What loading decided that ``plan`` and ``run`` say once (a plugin path found from the working
    directory, ``PluginPathWarning``)."""

    @property
    def task_ids(self) -> list[str]:
        return list(dict.fromkeys(p.task.task_id for p in self.plans))


class _Built(NamedTuple):
    task: TaskSpec
    provenance: dict[str, str]
    unmatched: list[str]


class _Upper(NamedTuple):
    """The layers over the task file: the settings (``settings.py``) and the command line."""

    settings: dict[str, Any]
    cli: dict[str, Any]


class _File(NamedTuple):
    path: Path
    data: dict[str, Any]
    by_variant: dict[str, list[_Built]]


def resolve(
    experiment: Experiment,
    paths: Sequence[Path],
    command_line: CommandLine = CommandLine(),
    selection: Selection = Selection(),
) -> Resolution:
    """Resolve every task for every variant, select tasks, and plan the episodes (task-major)."""
    check_plugins()
    if not paths and not experiment.tasks:
        raise ExperimentError("give task files or folders, or list them under 'tasks:' in the experiment")
    cli = command_line.layer()
    repeats = {v.variant_id: _repeats(experiment, v, command_line.repeats) for v in experiment.variants}
    origins = {
        v.variant_id: _repeats_origin(experiment, v, command_line.repeats) for v in experiment.variants
    }
    skipped: list[str] = []
    found = discover(paths or experiment.tasks, skipped)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", PluginPathWarning)
        files = _build_files(found, experiment, _Upper(dict(command_line.settings), cli), selection, origins)
    notes = loader_notes(caught)
    first = experiment.variants[0].variant_id
    keep = select([b.task for f in files for b in f.by_variant[first]], selection)
    plans = []
    for f in files:
        for i, built in enumerate(f.by_variant[first]):
            if built.task.task_id in keep:
                plans += _plans(f, i, experiment, repeats)
    _check_unique_episodes(plans)
    resolution = Resolution(
        experiment,
        plans,
        repeats,
        _suites(files, first, keep),
        [SourceFile(f.path, f.data, _kept(f, first, keep)) for f in files],
        _unmatched(files, keep),
        skipped,
        notes,
    )
    _check_skill_arms(resolution)
    return resolution


def _check_skill_arms(resolution: Resolution) -> None:
    """A variant meant to differ only by a skill that offers the baseline's skills (``skill_arms.py``)."""
    from coder_eval.experiment.skill_arms import skill_arm_errors  # it reads a Resolution

    errors = skill_arm_errors(resolution)
    if errors:
        raise ExperimentError("\n".join(errors))


def _check_unique_episodes(plans: Sequence[EpisodePlan]) -> None:
    """Two episodes must never share a trajectory file (ids like ``a--b`` + ``c`` vs ``a`` + ``b--c``)."""
    seen: dict[str, EpisodePlan] = {}
    for plan in plans:
        other = seen.setdefault(plan.episode_id, plan)
        if other is not plan:
            raise ExperimentError(
                f"tasks {other.task.task_id!r} (variant {other.variant_id!r}) and {plan.task.task_id!r} "
                f"(variant {plan.variant_id!r}) would share the episode id {plan.episode_id!r}; rename one"
            )


def _repeats(experiment: Experiment, variant: Variant, cli: int | None) -> int:
    return cli or variant.repeats or experiment.repeats or 1


def _repeats_origin(experiment: Experiment, variant: Variant, cli: int | None) -> str:
    if cli:
        return "cli"
    if variant.repeats:
        return f"variant:{variant.variant_id}"
    return "experiment" if experiment.repeats else BUILTIN


def _plans(f: _File, index: int, experiment: Experiment, repeats: dict[str, int]) -> list[EpisodePlan]:
    """One task's episodes, repeat by repeat and variant by variant, so a stopped run stays paired."""
    plans = []
    built = {v.variant_id: f.by_variant[v.variant_id][index] for v in experiment.variants}
    counts = {v: repeats[v] * b.task.trials for v, b in built.items()}  # a dialog's n_trials fan out
    for r in range(max(counts.values())):
        for variant in experiment.variants:
            if r < counts[variant.variant_id]:
                one = built[variant.variant_id]
                plans.append(EpisodePlan(one.task, variant.variant_id, r, one.provenance))
    return plans


def _build_files(
    files: list[Path],
    experiment: Experiment,
    upper: _Upper,
    selection: Selection,
    origins: dict[str, str],
) -> list[_File]:
    """Every task file merged per variant, under the ``upper`` layers."""
    built: list[_File] = []
    errors: list[str] = []
    for path in files:
        try:
            doc = task_doc(path)
            here = upper._replace(cli=_cli_for(doc, upper.cli, selection))
            by_variant = {
                v.variant_id: _build_variant(doc, experiment, v, here, origins[v.variant_id])
                for v in experiment.variants
            }
            merged = _merged(doc, experiment, experiment.variants[0], here).data
            built.append(_File(path, merged, by_variant))
        except InputError as exc:
            errors.append(str(exc))
    first = experiment.variants[0].variant_id
    errors += _duplicates([(b.task.task_id, f.path) for f in built for b in f.by_variant[first]])
    if errors:
        raise TaskError("\n".join(dict.fromkeys(errors)))  # an experiment's bad path, once
    return built


def _cli_for(doc: YamlDoc, cli: dict[str, Any], selection: Selection) -> dict[str, Any]:
    """The command-line layer for one file: dataset settings (``-D dataset.x``, ``--split``,
    ``--sample``, ``--sample-per-stratum``) only reach tasks that have a dataset."""
    if "dataset" not in doc.data:
        return {k: v for k, v in cli.items() if k != "dataset"}
    rows = selection.dataset_layer()
    if not rows:
        return cli
    return {**cli, "dataset": {**cli.get("dataset", {}), **rows}}


PROMPT_FIELDS = ("initial_prompt", "initial_prompt_file")


def _merged(doc: YamlDoc, experiment: Experiment, variant: Variant, upper: _Upper) -> Any:
    layers = [
        Layer("experiment", experiment.defaults),
        Layer("task", doc.data),
        Layer(SETTINGS, upper.settings),
        Layer(f"variant:{variant.variant_id}", variant.layer),
        Layer("cli", upper.cli),
    ]
    merged = merge_layers([_without_lower_prompt(layer, layers[i + 1 :]) for i, layer in enumerate(layers)])
    return settle_agent(merged, [layer.name for layer in layers])


def _without_lower_prompt(layer: Layer, higher: list[Layer]) -> Layer:
    """A layer without its prompt when a higher layer gives one: ``initial_prompt`` and
    ``initial_prompt_file`` replace each other."""
    if not any(key in h.data for h in higher for key in PROMPT_FIELDS):
        return layer
    return Layer(layer.name, {k: v for k, v in layer.data.items() if k not in PROMPT_FIELDS})


def _build_variant(
    doc: YamlDoc,
    experiment: Experiment,
    variant: Variant,
    upper: _Upper,
    repeats_origin: str,
) -> list[_Built]:
    merged = _merged(doc, experiment, variant, upper)
    layer = f"variant:{variant.variant_id}"
    out = []
    origins = plugin_origins(merged.set_by, experiment.plugin_origins)
    for task in build_tasks(YamlDoc(doc.path, merged.data, doc.lines), {}, origins):
        where = f"{doc.path}: task {task.task_id!r}, variant {variant.variant_id!r}: "
        seed = seed_for(variant.variant_id, task.task_id)
        rewrite = REPHRASER.bind(seed)
        mutated = mutate_prompt(
            task.prompt, experiment.mutations, variant.mutations, where=where, rephrase=rewrite
        )
        set_by = dict(merged.set_by)
        if "initial_prompt_file" in set_by:  # the prompt was read from that layer's file
            set_by.setdefault("initial_prompt", set_by["initial_prompt_file"])
        if mutated.prompt != task.prompt:
            task = task.model_copy(update={"initial_prompt": mutated.prompt})
            set_by["initial_prompt"] = layer
        dump = task.model_dump(mode="json", exclude=NOT_IN_PROVENANCE)
        prov = provenance(dump, set_by)
        prov["repeats"] = repeats_origin
        for i, rewritten in enumerate(mutated.rephrased):
            prov[f"prompt_mutations.rephrase[{i}]"] = json.dumps(
                {**rewritten, "seed": seed}, ensure_ascii=False
            )
        out.append(_Built(task, prov, mutated.unmatched))
    return out


REPHRASER = Rephraser()
"""Rewrites each distinct prompt once per process (``plan`` and ``run`` resolve the same way)."""


def _kept(f: _File, variant_id: str, keep: set[str]) -> tuple[TaskSpec, ...]:
    return tuple(b.task for b in f.by_variant[variant_id] if b.task.task_id in keep)


def _duplicates(ids: list[tuple[str, Path]]) -> list[str]:
    seen: dict[str, Path] = {}
    errors = []
    for task_id, path in ids:
        if task_id in seen:
            errors.append(f"{path}: task_id {task_id!r} is also used by {seen[task_id]}")
        seen[task_id] = path
    return errors


def _suites(files: list[_File], variant_id: str, keep: set[str]) -> list[Suite]:
    suites = []
    for f in files:
        tasks = _kept(f, variant_id, keep)
        if tasks and tasks[0].suite_gates:
            name = str(f.data.get("task_id", f.path.stem))
            suites.append(Suite(name, tasks[0].suite_gates, tuple(t.task_id for t in tasks)))
    return suites


def _unmatched(files: list[_File], keep: set[str]) -> list[tuple[str, str]]:
    """(variant, find) of replacements that matched no selected task's prompt."""
    tasks: Counter[str] = Counter()
    misses: Counter[tuple[str, str]] = Counter()
    for f in files:
        for variant_id, built in f.by_variant.items():
            for b in built:
                if b.task.task_id in keep:
                    tasks[variant_id] += 1
                    misses.update((variant_id, find) for find in set(b.unmatched))
    return [key for key, n in misses.items() if n == tasks[key[0]]]
