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
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from coder_eval.agents import PartialAgent
from coder_eval.criteria.base import check_regex
from coder_eval.errors import ExperimentError
from coder_eval.sandbox.spec import TemplateSource, source_kind
from coder_eval.scripted.script import ScriptRef
from coder_eval.task import Identifier, RunLimits, SandboxSpec
from coder_eval.yaml_source import Loc, YamlDoc, explain, read_yaml

DEFAULT_EXPERIMENT = Path("experiments/default.yaml")
"""Used when no ``--experiment`` is given and it exists in the working directory."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class PromptReplace(_Strict):
    """Replace ``find`` (literal text, or a regex with ``regex: true``) by ``replace`` everywhere."""

    find: str = Field(min_length=1, description="Text or pattern to find.")
    replace: str = Field(default="", description="Replacement (regex: may use \\1 or \\g<name>).")
    regex: bool = Field(default=False, description="Treat find as a Python regular expression.")

    @model_validator(mode="after")
    def _valid_regex(self) -> PromptReplace:
        if self.regex:
            check_regex(self.find)
        return self


class PromptMutations(_Strict):
    """Changes to the prompt, after dataset substitution, in this order: vars, replace, prefix, suffix."""

    vars: dict[str, str] = Field(default_factory=dict, description="Values of ${var.<name>} in the prompt.")
    replace: list[PromptReplace] = Field(default_factory=list, description="Replacements, in order.")
    prefix: str = Field(default="", description="Text put before the prompt.")
    suffix: str = Field(default="", description="Text put after the prompt.")


class DefaultsSpec(_Strict):
    """A partial task applied under every task (the task's own fields win)."""

    agent: PartialAgent | None = Field(default=None, description="Agent fields (of any kind).")
    sandbox: SandboxSpec | None = Field(default=None, description="Sandbox fields (paths: experiment file).")
    run_limits: RunLimits | None = Field(default=None, description="Per-episode limits.")
    repeats: int | None = Field(default=None, ge=1, description="Repeats per task and variant.")
    tags: list[str] | None = Field(default=None, description="Tags added to every task.")
    pre_run: list[str] | None = Field(default=None, description="Commands run before the task's own.")
    post_run: list[str] | None = Field(default=None, description="Commands run before the task's own.")
    scripted: ScriptRef = Field(default=None, description="Script for model 'scripted'.")


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
    prompt_mutations: PromptMutations = Field(default_factory=PromptMutations, description="Prompt edits.")
    scripted: ScriptRef = Field(
        default=None, description="Script for model 'scripted': inline, or a file (experiment file)."
    )
    gated: bool = Field(
        default=True,
        description="Gates apply to this arm; false for a reference arm that cannot meet them (a baseline "
        "without the skill a trigger threshold measures): its figures are shown, marked 'not gated'.",
    )


class CompareSpec(_Strict):
    """Which tasks the A/B headline (the compare report) pools; classification-only tasks never are."""

    tags: list[str] = Field(
        default_factory=list, description="Only tasks with any of these tags (empty: all)."
    )
    exclude_tags: list[str] = Field(
        default_factory=list, description="Leave out tasks with any of these tags."
    )


class ExperimentSpec(_Strict):
    """An experiment file."""

    experiment_id: Identifier = Field(description="Unique id, recorded in the run manifest.")
    description: str = Field(default="", description="What the experiment asks.")
    defaults: DefaultsSpec = Field(default_factory=DefaultsSpec, description="A partial task for all.")
    variants: list[VariantSpec] = Field(min_length=1, description="The arms, baseline first.")
    tasks: list[str] = Field(default_factory=list, description="Task paths, relative to this file.")
    compare: CompareSpec = Field(default_factory=CompareSpec, description="Tasks in the A/B headline.")

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
    mutations: PromptMutations
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

    @property
    def variant_ids(self) -> list[str]:
        return [v.variant_id for v in self.variants]


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
    paths = _Paths(doc)
    defaults = _dump(spec.defaults, exclude={"repeats"})
    for i, _ in enumerate(defaults.get("sandbox", {}).get("template_sources", [])):
        paths.template(
            defaults["sandbox"]["template_sources"][i], ("defaults", "sandbox", "template_sources", i)
        )
    if isinstance(defaults.get("scripted"), str):
        defaults["scripted"] = paths.file(defaults["scripted"], ("defaults", "scripted"))
    variants = tuple(_variant(v, i, paths) for i, v in enumerate(spec.variants))
    tasks = tuple(Path(paths.existing(t, ("tasks", i), None)) for i, t in enumerate(spec.tasks))
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
    )


def _variant(spec: VariantSpec, index: int, paths: _Paths) -> Variant:
    layer: dict[str, Any] = {}
    if spec.agent is not None:
        layer["agent"] = dict(spec.agent)
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
    return Variant(spec.variant_id, spec.description, layer, spec.repeats, spec.prompt_mutations, spec.gated)


def _dump(model: BaseModel, exclude: set[str] | None = None) -> dict[str, Any]:
    """Only the fields the file set: what this layer contributes to the merge."""
    return model.model_dump(mode="json", exclude_unset=True, exclude_none=True, exclude=exclude)


class _Paths:
    """Makes experiment-relative paths absolute and collects every missing one."""

    def __init__(self, doc: YamlDoc | None) -> None:
        self.doc = doc
        self.base = doc.path.resolve().parent if doc else Path.cwd()
        self.problems: list[str] = []

    def existing(self, relative: str, loc: Loc, want_dir: bool | None) -> str:
        target = (self.base / relative).resolve()
        ok = target.exists() if want_dir is None else (target.is_dir() if want_dir else target.is_file())
        if not ok:
            where = self.doc.where(loc) if self.doc else "experiment"
            field = ".".join(map(str, loc))
            self.problems.append(
                f"{where}: {field}: {relative!r} not found (looked for {target}); "
                "paths are relative to the experiment file"
            )
        return str(target)

    def file(self, relative: str, loc: Loc) -> str:
        return self.existing(relative, loc, want_dir=False)

    def template(self, source: dict[str, Any], loc: Loc) -> None:
        kind = source_kind(source)
        if kind == "template_dir":
            key = "path" if "path" in source else "template_dir"
            source[key] = self.existing(source[key], (*loc, key), True)
        if kind == "repo" and "://" not in source["url"] and not source["url"].startswith("git@"):
            source["url"] = self.existing(source["url"], (*loc, "url"), True)
        key = "files" if "files" in source else "starter_files"
        for j, starter in enumerate(source.get(key, [])):
            if isinstance(starter, dict) and "source" in starter:
                starter["source"] = self.file(starter["source"], (*loc, key, j, "source"))

    def raise_problems(self) -> None:
        if self.problems:
            raise ExperimentError("\n".join(self.problems))
