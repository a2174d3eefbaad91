"""Paths in an experiment file: relative to the file, made absolute and checked at load time.

Example::

    paths = ExperimentPaths(doc)
    layer["scripted"] = paths.file("scripts/offline.yaml", ("variants", 0, "scripted"))
    paths.raise_problems()          # every missing path at once, each with its line
"""

from __future__ import annotations

import warnings
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from coder_eval.agents.skill_sources import PluginOrigin, PluginPathWarning, relative_to_file
from coder_eval.errors import ExperimentError
from coder_eval.experiment.mutations import Mutations, RephraseStep
from coder_eval.sandbox.spec import source_kind
from coder_eval.yaml_source import Loc, YamlDoc


class ExperimentPaths:
    """Makes experiment-relative paths absolute and collects every missing one."""

    def __init__(self, doc: YamlDoc | None) -> None:
        self.doc = doc
        self.base = doc.path.resolve().parent if doc else Path.cwd()
        self.problems: list[str] = []
        self.plugin_origins: dict[str, tuple[PluginOrigin, ...]] = {}
        """Per merge layer (``experiment``, ``variant:<id>``), where each of its plugin paths was written."""

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

    def plugins(self, agent: dict[str, Any], layer: str, loc: Loc) -> None:
        """``agent.plugins`` entries that name folders relative to the experiment file, made absolute;
        the rest are left for the task loader (``coder_eval.agents.skill_sources``), which looks for
        them next to this file too, and names it and the entry's line (``plugin_origins``)."""
        entries = agent.get("plugins")
        if not isinstance(entries, list):
            return
        resolved: list[Any] = []
        origins = []
        for i, entry in enumerate(entries):
            where = (*loc, "plugins", i)
            file = self.doc.path if self.doc else Path("experiment")
            field = ".".join(f"[{p}]" if isinstance(p, int) else p for p in where).replace(".[", "[")
            origins.append(PluginOrigin(file, self.doc.where(where) if self.doc else str(file), field))
            if isinstance(entry, str):
                entry = relative_to_file(entry, self.base)
            elif isinstance(entry, dict) and isinstance(entry.get("path"), str):
                entry = {**entry, "path": relative_to_file(entry["path"], self.base)}
            resolved.append(entry)
        agent["plugins"] = resolved
        self.plugin_origins[layer] = tuple(origins)

    def mutations(self, mutations: Mutations, loc: Loc) -> Mutations:
        """The mutations with each rephrase step's script file made absolute (and checked)."""
        if not isinstance(mutations, list):
            return mutations
        out = []
        for i, step in enumerate(mutations):
            if isinstance(step, RephraseStep) and isinstance(step.scripted, str):
                step = step.model_copy(update={"scripted": self.file(step.scripted, (*loc, i, "scripted"))})
            out.append(step)
        return out

    def raise_problems(self) -> None:
        if self.problems:
            raise ExperimentError("\n".join(self.problems))


def plugin_origins(
    set_by: Mapping[str, str], written: Mapping[str, tuple[PluginOrigin, ...]]
) -> dict[int, PluginOrigin]:
    """Which merged ``agent.plugins`` entries an experiment layer wrote, and where: the appended
    list's provenance (``set_by``) names each index's layer, and that layer's entries come in order.

    Example: ``plugin_origins({"agent.plugins[0]": "task", "agent.plugins[1]": "variant:b"},
    {"variant:b": (origin,)})`` -> ``{1: origin}``.
    """
    origins: dict[int, PluginOrigin] = {}
    taken: Counter[str] = Counter()
    i = 0
    while (layer := set_by.get(f"agent.plugins[{i}]")) is not None:
        mine = written.get(layer, ())
        if taken[layer] < len(mine):
            origins[i] = mine[taken[layer]]
        taken[layer] += 1
        i += 1
    return origins


def loader_notes(caught: Sequence[warnings.WarningMessage]) -> list[str]:
    """The loaders' ``PluginPathWarning`` messages (a plugin path found from the working directory),
    each once; any other warning caught with them is warned again.

    Example: ``with warnings.catch_warnings(record=True) as caught: ...; notes = loader_notes(caught)``.
    """
    for other in (w for w in caught if not issubclass(w.category, PluginPathWarning)):
        warnings.warn_explicit(
            other.message, other.category, other.filename, other.lineno, source=other.source
        )
    return list(dict.fromkeys(str(w.message) for w in caught if issubclass(w.category, PluginPathWarning)))
