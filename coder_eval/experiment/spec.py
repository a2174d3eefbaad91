"""Experiment files: variants of one agent set-up, compared on the same tasks.

Example (``experiments/skill_ab.yaml``)::

    experiment_id: skill-ab
    description: Does the deploy skill help?
    defaults:
      agent: {kind: claude-code, model: claude-sonnet-4-5}
      run_limits: {max_turns: 30}
      repeats: 3
    variants:
      - variant_id: baseline
      - variant_id: with-skill
        template_sources:
          - {template_dir: plugins/deploy, target: .plugins/deploy}
        agent: {plugins: [.plugins/deploy]}
        prompt_mutations: {suffix: "\\n\\nUse the skills you have."}
    tasks: [../tasks/deploy]

``load_experiment(path)`` validates it (unknown keys are errors with a did-you-mean) and makes every
path absolute, relative to the experiment file.
"""

from __future__ import annotations

import importlib.resources
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from coder_eval.agents import PartialAgent
from coder_eval.agents.skill_sources import PluginOrigin
from coder_eval.errors import ExperimentError, did_you_mean
from coder_eval.experiment.mutations import Mutations, PromptMutations
from coder_eval.experiment.paths import ExperimentPaths
from coder_eval.manifest import UntilConclusiveRule
from coder_eval.sandbox.spec import TemplateSource
from coder_eval.scripted.script import ScriptRef
from coder_eval.task import Identifier, RunLimits, SandboxSpec
from coder_eval.task.simulation import SimulationSpec
from coder_eval.yaml_source import YamlDoc, explain, read_yaml

DEFAULT_EXPERIMENT = Path("experiments/default.yaml")
"""Used when no ``--experiment`` is given and it exists in the working directory."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _partial_simulation(value: Any) -> Any:
    """A partial ``simulation`` block (it is merged over the task's): its keys are checked here."""
    if isinstance(value, dict):
        fields = [name for name in SimulationSpec.model_fields]
        for key in value:
            if key not in fields:
                raise ValueError(
                    f"simulation.{key}: unknown field{did_you_mean(str(key), fields)}; "
                    f"valid fields: {', '.join(fields)}"
                )
    return value


PartialSimulation = Annotated[dict[str, Any] | None, BeforeValidator(_partial_simulation)]


class DefaultsSpec(_Strict):
    """A partial task applied under every task (the task's own fields win)."""

    agent: PartialAgent | None = Field(default=None, description="Agent fields (of any kind).")
    sandbox: SandboxSpec | None = Field(default=None, description="Sandbox fields (paths: experiment file).")
    run_limits: RunLimits | None = Field(default=None, description="Per-episode limits.")
    repeats: int | None = Field(default=None, ge=1, description="Repeats per task and variant.")
    tags: list[str] | None = Field(default=None, description="Tags added to every task.")
    pre_run: list[str | dict[str, Any]] | None = Field(
        default=None, description="Commands run before the task's own."
    )
    post_run: list[str | dict[str, Any]] | None = Field(
        default=None, description="Commands run after the task's own."
    )
    scripted: ScriptRef = Field(default=None, description="Script for model 'scripted'.")
    prompt_mutations: Mutations = Field(
        default_factory=PromptMutations, description="Prompt edits, applied before the variant's."
    )
    simulation: PartialSimulation = Field(default=None, description="Simulation fields (deep-merged).")


class VariantSpec(_Strict):
    """One arm of the experiment: what differs from the defaults and the task."""

    variant_id: Identifier = Field(description="Unique id (episode ids and reports use it).")
    description: str = Field(default="", description="What this arm changes.")
    agent: PartialAgent | None = Field(default=None, description="Agent fields (deep-merged).")
    run_limits: RunLimits | None = Field(default=None, description="Per-episode limits.")
    repeats: int | None = Field(default=None, ge=1, description="Repeats per task for this variant.")
    template_sources: list[TemplateSource] = Field(
        default_factory=list, description="Appended to sandbox.template_sources (paths: experiment file)."
    )
    prompt_mutations: Mutations = Field(
        default_factory=PromptMutations, description="Prompt edits: a mapping, or an ordered list of steps."
    )
    simulation: PartialSimulation = Field(default=None, description="Simulation fields (deep-merged).")
    initial_prompt: str | None = Field(default=None, description="Replaces the task's prompt.")
    initial_prompt_file: str | None = Field(
        default=None, description="Replaces the task's prompt with this file (relative to the experiment)."
    )
    driver: str | None = Field(default=None, description="The sandbox driver (sandbox.driver).")
    scripted: ScriptRef = Field(
        default=None, description="Script for model 'scripted': inline, or a file (experiment file)."
    )
    gated: bool = Field(
        default=True,
        description="Gates apply to this arm; false for a reference arm that cannot meet them (a baseline "
        "without the skill a trigger threshold measures): its figures are shown, marked 'not gated'.",
    )

    @model_validator(mode="after")
    def _one_prompt(self) -> VariantSpec:
        if self.initial_prompt is not None and self.initial_prompt_file is not None:
            raise ValueError("give initial_prompt or initial_prompt_file, not both")
        return self


class CompareSpec(_Strict):
    """Which tasks the A/B headline (the compare report) pools; classification-only tasks never are."""

    tags: list[str] = Field(
        default_factory=list, description="Only tasks with any of these tags (empty: all)."
    )
    exclude_tags: list[str] = Field(
        default_factory=list, description="Leave out tasks with any of these tags."
    )


class BaselineSpec(_Strict):
    """A regression gate: the run against a baseline run (``run --baseline`` / ``--fail-on`` replace it)."""

    run: str = Field(description="The baseline: a run folder, a run id in the store, or latest-on-BRANCH.")
    fail_on: Literal["worse", "never"] = Field(
        default="worse", description="worse: the run fails (exit 1) when called worse; never: only shown."
    )


class ExperimentSpec(_Strict):
    """An experiment file."""

    experiment_id: Identifier = Field(description="Unique id, recorded in the run manifest.")
    description: str = Field(default="", description="What the experiment asks.")
    defaults: DefaultsSpec = Field(default_factory=DefaultsSpec, description="A partial task for all.")
    variants: list[VariantSpec] = Field(min_length=1, description="The arms, baseline first.")
    tasks: list[str] = Field(default_factory=list, description="Task paths, relative to this file.")
    compare: CompareSpec = Field(default_factory=CompareSpec, description="Tasks in the A/B headline.")
    until_conclusive: UntilConclusiveRule | None = Field(
        default=None, description="Run tasks until the comparison is decided (docs/experiments.md)."
    )

    @model_validator(mode="after")
    def _rule_arms(self) -> ExperimentSpec:
        rule, ids = self.until_conclusive, [v.variant_id for v in self.variants]
        for arm in ("baseline", "candidate") if rule is not None else ():
            name = getattr(rule, arm)
            if name is not None and name not in ids:
                raise ValueError(
                    f"until_conclusive.{arm}: {name!r} is not a variant{did_you_mean(name, ids)}; "
                    f"variants: {', '.join(ids)}"
                )
        return self

    baseline: BaselineSpec | None = Field(
        default=None, description="A regression gate against a baseline run."
    )

    @field_validator("variants")
    @classmethod
    def _unique_ids(cls, variants: list[VariantSpec]) -> list[VariantSpec]:
        ids = [v.variant_id for v in variants]
        if len(ids) != len(set(ids)):
            raise ValueError(f"variant ids must be unique, got {ids}")
        return variants


@dataclass(frozen=True)
class Variant:
    """A validated variant: its merge layer (a partial task, paths absolute) and what else it sets."""

    variant_id: str
    description: str
    layer: dict[str, Any]
    repeats: int | None
    mutations: Mutations
    gated: bool = True


@dataclass(frozen=True)
class Experiment:
    """A validated experiment; ``path`` is None for the built-in default."""

    experiment_id: str
    description: str
    path: Path | None
    defaults: dict[str, Any]
    repeats: int | None
    variants: tuple[Variant, ...]
    tasks: tuple[Path, ...]
    compare: CompareSpec = field(default_factory=CompareSpec)
    mutations: Mutations = field(default_factory=PromptMutations)
    """The defaults' prompt mutations, applied before each variant's."""
    until_conclusive: UntilConclusiveRule | None = None
    """The experiment's ``until_conclusive:`` block: the run stops at its answer."""
    baseline: BaselineSpec | None = None
    plugin_origins: dict[str, tuple[PluginOrigin, ...]] = field(default_factory=dict)
    """Per merge layer (``experiment``, ``variant:<id>``), where each of its ``agent.plugins`` was written."""

    @property
    def variant_ids(self) -> list[str]:
        return [v.variant_id for v in self.variants]


def experiment_path(given: Path) -> Path:
    """``-e NAME``: a file as given when it exists, else ``experiments/NAME.yaml``.

    Example: ``experiment_path(Path("skills_ab"))`` -> ``Path("experiments/skills_ab.yaml")`` (when there
    is no file ``skills_ab`` here).
    """
    if given.exists() or given.suffix in (".yaml", ".yml") or len(given.parts) != 1:
        return given
    named = DEFAULT_EXPERIMENT.parent / f"{given.name}.yaml"
    if not named.is_file():
        raise ExperimentError(f"-e {given}: no such file, and no {named} here")
    return named


def load_experiment(path: Path | None) -> Experiment:
    """``path``, else ``experiments/default.yaml`` when it exists here, else the one coder_eval ships."""
    if path is None:
        if not DEFAULT_EXPERIMENT.is_file():
            return default_experiment()
        path = DEFAULT_EXPERIMENT
    doc = read_yaml(path, kind=ExperimentError)
    try:
        spec = ExperimentSpec.model_validate(doc.data)
    except ValidationError as exc:
        raise ExperimentError(explain(exc, doc, ExperimentSpec)) from exc
    return _build(spec, doc)


def default_experiment() -> Experiment:
    """The default shipped with coder_eval (``experiments/default.yaml``, package data): one variant,
    ``default``, that changes nothing."""
    shipped = importlib.resources.files("coder_eval.experiments") / DEFAULT_EXPERIMENT.name
    with importlib.resources.as_file(shipped) as path:
        return load_experiment(path)


def _build(spec: ExperimentSpec, doc: YamlDoc | None) -> Experiment:
    paths = ExperimentPaths(doc)
    defaults = _dump(spec.defaults, exclude={"repeats", "prompt_mutations"})
    if isinstance(defaults.get("agent"), dict):
        paths.plugins(defaults["agent"], "experiment", ("defaults", "agent"))
    for i, _ in enumerate(defaults.get("sandbox", {}).get("template_sources", [])):
        paths.template(
            defaults["sandbox"]["template_sources"][i], ("defaults", "sandbox", "template_sources", i)
        )
    if isinstance(defaults.get("scripted"), str):
        defaults["scripted"] = paths.file(defaults["scripted"], ("defaults", "scripted"))
    if isinstance((defaults.get("simulation") or {}).get("scripted"), str):
        scripted = defaults["simulation"]["scripted"]
        defaults["simulation"]["scripted"] = paths.file(scripted, ("defaults", "simulation", "scripted"))
    variants = tuple(_variant(v, i, paths) for i, v in enumerate(spec.variants))
    tasks = tuple(Path(paths.existing(t, ("tasks", i), None)) for i, t in enumerate(spec.tasks))
    mutations = paths.mutations(spec.defaults.prompt_mutations, ("defaults", "prompt_mutations"))
    paths.raise_problems()
    return Experiment(
        spec.experiment_id,
        spec.description,
        doc.path.resolve() if doc else None,
        defaults,
        spec.defaults.repeats,
        variants,
        tasks,
        spec.compare,
        mutations,
        spec.until_conclusive,
        spec.baseline,
        paths.plugin_origins,
    )


def _variant(spec: VariantSpec, index: int, paths: ExperimentPaths) -> Variant:
    layer: dict[str, Any] = {}
    if spec.agent is not None:
        layer["agent"] = dict(spec.agent)
        paths.plugins(layer["agent"], f"variant:{spec.variant_id}", ("variants", index, "agent"))
    if spec.run_limits is not None:
        layer["run_limits"] = _dump(spec.run_limits)
    if spec.template_sources:
        sources = [_dump(s) for s in spec.template_sources]
        for i, source in enumerate(sources):
            paths.template(source, ("variants", index, "template_sources", i))
        layer["sandbox"] = {"template_sources": sources}
    if spec.scripted is not None:
        scripted = spec.scripted
        if isinstance(scripted, str):
            scripted = paths.file(scripted, ("variants", index, "scripted"))
        layer["scripted"] = scripted
    fields = _variant_task_fields(spec, index, paths)
    if "sandbox" in fields and "sandbox" in layer:
        fields["sandbox"] = {**layer["sandbox"], **fields["sandbox"]}
    layer.update(fields)
    mutations = paths.mutations(spec.prompt_mutations, ("variants", index, "prompt_mutations"))
    return Variant(spec.variant_id, spec.description, layer, spec.repeats, mutations, spec.gated)


def _variant_task_fields(spec: VariantSpec, index: int, paths: ExperimentPaths) -> dict[str, Any]:
    """What a variant sets on the task besides agent, limits, templates and script: the simulation,
    the prompt (one of the two fields, replacing the task's) and the sandbox driver."""
    layer: dict[str, Any] = {}
    if spec.simulation is not None:
        layer["simulation"] = dict(spec.simulation)
        if isinstance(layer["simulation"].get("scripted"), str):
            where = ("variants", index, "simulation", "scripted")
            layer["simulation"]["scripted"] = paths.file(layer["simulation"]["scripted"], where)
    if spec.initial_prompt is not None:
        layer["initial_prompt"] = spec.initial_prompt
    if spec.initial_prompt_file is not None:
        layer["initial_prompt_file"] = paths.file(
            spec.initial_prompt_file, ("variants", index, "initial_prompt_file")
        )
    if spec.driver is not None:
        layer["sandbox"] = {**layer.get("sandbox", {}), "driver": spec.driver}
    return layer


def _dump(model: BaseModel, exclude: set[str] | None = None) -> dict[str, Any]:
    """Only the fields the file set: what this layer contributes to the merge."""
    return model.model_dump(mode="json", exclude_unset=True, exclude_none=True, exclude=exclude)
