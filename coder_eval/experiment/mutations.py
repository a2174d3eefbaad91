"""Prompt mutations of a variant (and of the experiment's defaults), applied after dataset substitution.

Two spellings. A mapping (ours) applies in a fixed order: ``${var.<name>}`` substitution, each
``replace`` in turn, then ``prefix`` and ``suffix`` (joined as written)::

    prompt_mutations: {vars: {target: calc}, suffix: " Be brief."}

An ordered list (the original format), each step one of ``prefix`` / ``suffix`` (``text``),
``replace`` (``find``, ``replace``, ``regex``), ``template`` (``template`` holding ``{prompt}``) or
``rephrase`` (a model rewrites the prompt; see ``rephrase.py``)::

    prompt_mutations:
      - {type: template, template: "You are on call.\\n\\n{prompt}"}
      - {type: replace, find: deployctl, replace: the deploy CLI}
      - {type: rephrase, model: scripted, scripted: scripts/rephrase.yaml}

Example::

    mutate_prompt("Fix ${var.target}.", PromptMutations(vars={"target": "calc"}, suffix=" Be brief."))
    # Mutated(prompt='Fix calc. Be brief.', unmatched=[], rephrased=[])
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Annotated, Any, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, model_validator

from coder_eval.criteria.base import check_regex
from coder_eval.errors import ExperimentError
from coder_eval.scripted.script import ScriptRef

VAR_REF = re.compile(r"\$\{var\.([A-Za-z0-9_]+)\}")
PLACEHOLDER = re.compile(r"\{\{\s*prompt\s*\}\}|\$\{prompt\}|\{prompt\}")
"""Where a ``template`` puts the prompt: ``{prompt}`` (also ``{{ prompt }}`` and ``${prompt}``)."""
REPHRASE_MODEL = "claude-haiku-4-5"
REPHRASE_INSTRUCTION = (
    "Rewrite the user's task description in your own words. Keep every requirement, name, path, "
    "number and constraint exactly; change only the wording. Answer with the rewritten task only."
)


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


class PrefixStep(_Strict):
    type: Literal["prefix"] = "prefix"
    text: str = Field(description="Text put before the prompt.")


class SuffixStep(_Strict):
    type: Literal["suffix"] = "suffix"
    text: str = Field(description="Text put after the prompt.")


class ReplaceStep(PromptReplace):
    type: Literal["replace"] = "replace"


class TemplateStep(_Strict):
    type: Literal["template"] = "template"
    template: str = Field(description="The new prompt; {prompt} stands for the prompt so far.")

    @model_validator(mode="after")
    def _has_placeholder(self) -> TemplateStep:
        if not PLACEHOLDER.search(self.template):
            raise ValueError("template: put {prompt} where the prompt goes")
        return self


class RephraseStep(_Strict):
    """A model rewrites the prompt: ``scripted`` offline (seeded per task and variant), else a real model."""

    type: Literal["rephrase"] = "rephrase"
    model: str = Field(default=REPHRASE_MODEL, description="Model id, or 'scripted' with a 'scripted' block.")
    instruction: str = Field(default=REPHRASE_INSTRUCTION, min_length=1, description="The system prompt.")
    temperature: float | None = Field(default=None, ge=0, le=1, description="Sampling temperature.")
    max_tokens: int = Field(default=2048, ge=16, le=32_000, description="Output tokens of the rewrite.")
    scripted: ScriptRef = Field(default=None, description="Script for model 'scripted' (inline or a file).")

    @model_validator(mode="after")
    def _script_when_scripted(self) -> RephraseStep:
        if (self.model == "scripted") != (self.scripted is not None):
            raise ValueError("give 'scripted' exactly when model is 'scripted'")
        return self


PromptStep = Annotated[
    PrefixStep | SuffixStep | ReplaceStep | TemplateStep | RephraseStep, Field(discriminator="type")
]
Mutations = PromptMutations | list[PromptStep]
"""A ``prompt_mutations`` value: our mapping, or the original's ordered list."""
Rephrase = Callable[[str, RephraseStep], str]
"""Rewrites a prompt as a ``rephrase`` step says (``rephrase.Rephraser`` binds the seed)."""


class Mutated(NamedTuple):
    """The new prompt, the ``find`` of each replacement that matched nothing, and each rewrite by a
    model (``{"model", "seed", "prompt"}``)."""

    prompt: str
    unmatched: list[str]
    rephrased: list[dict[str, Any]]


def steps(mutations: Mutations) -> list[Any]:
    """The mutations as an ordered list of steps (the mapping spelling in its fixed order)."""
    if isinstance(mutations, list):
        return list(mutations)
    found: list[Any] = [ReplaceStep(**rule.model_dump()) for rule in mutations.replace]
    return [*found, PrefixStep(text=mutations.prefix), SuffixStep(text=mutations.suffix)]


def mutate_prompt(
    prompt: str, *layers: Mutations, where: str = "", rephrase: Rephrase | None = None
) -> Mutated:
    """Apply each layer's mutations in turn (the experiment's defaults, then the variant's); a
    ``${var.x}`` no mapping defines is an ExperimentError."""
    defined = {k: v for m in layers if isinstance(m, PromptMutations) for k, v in m.vars.items()}
    missing = sorted({name for name in VAR_REF.findall(prompt) if name not in defined})
    if missing:
        raise ExperimentError(
            f"{where}the prompt uses ${{var.{missing[0]}}} but the variant's prompt_mutations.vars "
            f"does not define it (defined: {', '.join(defined) or 'none'})"
        )
    text = VAR_REF.sub(lambda m: defined[m.group(1)], prompt)
    unmatched: list[str] = []
    rephrased: list[dict[str, Any]] = []
    for step in (s for layer in layers for s in steps(layer)):
        if isinstance(step, RephraseStep):
            if rephrase is None:
                raise ExperimentError(f"{where}a rephrase step needs a model, and none was given here")
            before, text = text, rephrase(text, step)
            rephrased.append({"model": step.model, "prompt": text, "before": before})
        else:
            text = _apply(step, text, unmatched)
    return Mutated(text, unmatched, rephrased)


def _apply(step: Any, text: str, unmatched: list[str]) -> str:
    if isinstance(step, PrefixStep):
        return step.text + text
    if isinstance(step, SuffixStep):
        return text + step.text
    if isinstance(step, TemplateStep):
        return PLACEHOLDER.sub(lambda _: text, step.template)
    if step.regex:
        text, count = re.subn(step.find, step.replace, text)
    else:
        count = text.count(step.find)
        text = text.replace(step.find, step.replace)
    if not count:
        unmatched.append(step.find)
    return str(text)
