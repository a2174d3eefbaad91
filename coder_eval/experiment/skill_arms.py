"""What skills each arm offers, checked before anything runs.

Example::

    offered_skills(plan.task)        # Offer(skills=frozenset({("pdf", "3f2a…")}), known=True)
    skill_warnings(resolution)       # ["variant 'with-skill': agent.plugins entry '/…' holds no skill …"]
    skill_arm_errors(resolution)     # ["variant 'with-skill' is meant to differ from 'baseline' only by …"]

A **skill arm** is a variant meant to differ from the baseline (the experiment's first variant)
only by a skill: every field it sets is ``agent.plugins`` or ``template_sources`` (how skills reach
a sandbox), with at least one plugin, and it mutates no prompt. When such an arm offers, on every
task, exactly the skills the baseline offers (the same names with the same files, or none at all),
the comparison would measure no skill: that is an error at plan time. Two arms offering the same
skill in different versions (different files) differ, as a skill v1 / v2 experiment should.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, NamedTuple

from coder_eval.agents.skill_sources import PluginContents, is_host_plugin, plugin_contents
from coder_eval.agents.spec import plugin_paths
from coder_eval.sandbox.spec import RepoSource, StarterFile, TemplateSource
from coder_eval.sandbox.template_files import template_folder

if TYPE_CHECKING:
    from coder_eval.experiment.resolve import Resolution
    from coder_eval.experiment.spec import Variant
    from coder_eval.task import TaskSpec

SKILL_FIELDS = {"agent": {"plugins"}, "sandbox": {"template_sources"}}
"""The fields a skill arm may set (``layer key -> its sub-fields``)."""


class Offer(NamedTuple):
    """The skills a task's agent is offered: (name, digest) pairs; ``known`` is False when some come
    from workspace folders only the sandbox will hold (a repository, ``pre_run``)."""

    skills: frozenset[tuple[str, str]]
    known: bool


@functools.cache
def _contents(folder: str) -> PluginContents:
    return plugin_contents(Path(folder))


def offered_skills(task: TaskSpec) -> Offer:
    """The skills ``task``'s plugins offer (host folders, and workspace folders a template copies)."""
    skills: set[tuple[str, str]] = set()
    known = True
    for path in plugin_paths(task.agent):
        folder = path if is_host_plugin(path) else template_folder(path, task.sandbox.template_sources)
        if folder is None:
            known = False
            continue
        skills |= _contents(str(folder)).fingerprint
    return Offer(frozenset(skills), known)


def skill_names(task: TaskSpec) -> list[str]:
    """The names of the skills ``task`` offers, sorted (for ``plan``)."""
    return sorted({name for name, _ in offered_skills(task).skills})


def skill_warnings(resolution: Resolution) -> Iterator[str]:
    """A plugin entry from which no skill would load (correct both ways: a bare skills root, a
    manifest's own skills folders and a workspace folder a template copies all count)."""
    for plan in resolution.plans:
        if plan.repeat:
            continue
        for path in plugin_paths(plan.task.agent):
            if not _loads_some(path, plan.task):
                yield (
                    f"variant {plan.variant_id!r}: agent.plugins entry {path!r} holds no skill (no "
                    "skills/<name>/SKILL.md, nor <name>/SKILL.md in a bare skills root): no skill would load"
                )


def _loads_some(path: str, task: TaskSpec) -> bool:
    sources = task.sandbox.template_sources
    folder = path if is_host_plugin(path) else template_folder(path, sources)
    if folder is not None:
        return bool(_contents(str(folder)).skills)
    if task.pre_run or any(isinstance(s, RepoSource) for s in sources):
        return True  # made in the sandbox: nothing to tell from here
    return _starter_skills(path, sources)


def _starter_skills(path: str, sources: list[TemplateSource]) -> bool:
    """Starter files that put a ``SKILL.md`` at ``<path>/skills/<name>/`` or ``<path>/<name>/``."""
    wanted = PurePosixPath(path)
    for source in sources:
        if isinstance(source, RepoSource):
            continue
        for starter in source.files:
            name = starter.path if isinstance(starter, StarterFile) else starter
            placed = PurePosixPath(source.mount_point) / name
            if placed.name != "SKILL.md" or not placed.is_relative_to(wanted):
                continue
            if len(placed.relative_to(wanted).parts) in (2, 3):
                return True
    return False


def is_skill_arm(variant: Variant) -> bool:
    """``variant`` sets only skill fields (see the module docstring), with at least one plugin."""
    layer = variant.layer
    if not (layer.get("agent") or {}).get("plugins") or _mutates(variant):
        return False
    for key, value in layer.items():
        allowed = SKILL_FIELDS.get(key)
        if allowed is None or not isinstance(value, dict) or not set(value) <= allowed:
            return False
    return True


def _mutates(variant: Variant) -> bool:
    mutations = variant.mutations
    return bool(mutations) if isinstance(mutations, list) else mutations != type(mutations)()


def skill_arm_errors(resolution: Resolution) -> list[str]:
    """Skill arms that offer exactly the baseline's skills on every task (see the module docstring)."""
    variants = resolution.experiment.variants
    if len(variants) < 2:
        return []
    baseline = variants[0].variant_id
    by_variant: dict[str, dict[str, Offer]] = {}
    for plan in resolution.plans:  # an agent that loads no skills (--agent oracle) drops them: not compared
        if plan.repeat == 0 and "plugins" in type(plan.task.agent).model_fields:
            by_variant.setdefault(plan.variant_id, {})[plan.task.task_id] = offered_skills(plan.task)
    errors = []
    for variant in variants[1:]:
        if not is_skill_arm(variant):
            continue
        mine, theirs = by_variant.get(variant.variant_id, {}), by_variant.get(baseline, {})
        pairs = [(mine[t], theirs[t]) for t in mine if t in theirs]
        if pairs and all(a.known and b.known and a.skills == b.skills for a, b in pairs):
            errors.append(_same_skills(variant.variant_id, baseline, pairs[0][0]))
    return errors


def _same_skills(variant: str, baseline: str, offer: Offer) -> str:
    shown = ", ".join(sorted(name for name, _ in offer.skills)) or "none"
    return (
        f"variant {variant!r} is meant to differ from the baseline {baseline!r} only by its skills (it "
        f"sets nothing but agent.plugins and template folders), but on every task it offers the same "
        f"skills as the baseline ({shown}): the comparison would measure no skill. Check its "
        "agent.plugins paths (a folder of skills/<name>/SKILL.md, or of <name>/SKILL.md)"
    )


__all__ = [
    "Offer",
    "is_skill_arm",
    "offered_skills",
    "skill_arm_errors",
    "skill_names",
    "skill_warnings",
]
