"""The one merge engine: five layers, each field merged the one way ``MERGE_RULES`` declares.

Layers, lowest first: ``builtin`` (the task schema's defaults) → ``experiment`` (its ``defaults``)
→ ``task`` (the task file) → ``settings`` (``DEFAULT_*`` from the environment or ``.env``) →
``variant:<id>`` → ``cli`` (``-D``, ``--model``, ``--agent``).

Example::

    merged = merge_layers([Layer("task", {"agent": {"kind": "oracle"}}),
                           Layer("cli", {"agent": {"model": "m"}})])
    merged.data        # {"agent": {"kind": "oracle", "model": "m"}}
    merged.set_by      # {"agent.kind": "task", "agent.model": "cli"} (settle_agent folds kind into type)
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from coder_eval.agents import kind_fields

Rule = Literal["replace", "deep-merge", "append"]

MERGE_RULES: dict[str, Rule] = {
    "agent": "deep-merge",
    "agent.allowed_tools": "replace",
    "agent.disallowed_tools": "replace",
    "agent.setting_sources": "replace",
    "agent.plugins": "append",
    "agent.env": "deep-merge",
    "agent.ignore_patterns": "append",
    "agent.claude_settings": "deep-merge",
    "agent.sdk_options": "deep-merge",
    "sandbox": "deep-merge",
    "sandbox.template_sources": "append",
    "sandbox.mock_path_dirs": "append",
    "sandbox.shims": "append",
    "sandbox.record_cli": "append",
    "sandbox.ignore_patterns": "append",
    "sandbox.scratch_dirs": "replace",
    "sandbox.limits": "deep-merge",
    "sandbox.env": "deep-merge",
    "run_limits": "deep-merge",
    "dataset": "deep-merge",
    "dataset.rows": "replace",
    "dataset.path": "replace",
    "dataset.paths": "replace",
    "suite_thresholds": "deep-merge",
    "success_criteria": "replace",
    "tags": "append",
    "pre_run": "append",
    "post_run": "append",
    "scripted": "replace",
    "hidden_tests": "replace",
    "reference_solution": "replace",
    "simulation": "deep-merge",
    "simulation.constraints": "replace",
    "simulation.scripted": "replace",
}
"""How each field merges when a higher layer sets it; every other field is replaced."""

DEFAULT_RULE: Rule = "replace"
"""Scalars, and any field not listed (``agent.env.<NAME>`` and ``suite_thresholds.<id>`` included)."""

BUILTIN = "builtin"
SETTINGS = "settings"
"""The ``DEFAULT_*`` settings' layer (``settings.py``), over the task and under the variant."""
_INDEX = re.compile(r"\[\d+\]$")


@dataclass(frozen=True)
class Layer:
    """One layer: its name as provenance shows it, and the partial task it sets."""

    name: str
    data: Mapping[str, Any]


@dataclass(frozen=True)
class Merged:
    """The merged partial task and, for each path a layer set, the last layer that set it."""

    data: dict[str, Any]
    set_by: dict[str, str]


def rule_for(path: str) -> Rule:
    """The declared rule of a dotted field path (``"agent.env"`` -> ``"deep-merge"``)."""
    return MERGE_RULES.get(path, DEFAULT_RULE)


def merge_layers(layers: Sequence[Layer]) -> Merged:
    """Merge ``layers`` in order; a later layer wins by each field's rule."""
    data: dict[str, Any] = {}
    set_by: dict[str, str] = {}
    for layer in layers:
        _merge_into(data, layer.data, "", layer.name, set_by)
    return Merged(data, set_by)


def settle_agent(merged: Merged, order: Sequence[str]) -> Merged:
    """One agent kind wins the merged ``agent`` block.

    ``type`` and ``kind`` (the same field) fold into ``type``, the higher layer's value winning. Fields
    another layer set that the winning kind does not have are dropped (``--agent oracle`` over an
    experiment that configures Claude Code runs the oracle; a variant's ``env`` does not break a task
    whose agent is ``none``), and provenance says so (``dropped:<layer>``: ``plan`` warns about it).
    Fields set in the same layer as the kind stay, so a file that gives its own agent another kind's
    field is still an error.

    Example: ``settle_agent(merge_layers([Layer("experiment", {"agent": {"allowed_tools": ["Bash"]}}),
    Layer("cli", {"agent": {"type": "oracle"}})]), ["experiment", "cli"]).data`` -> ``{"agent":
    {"type": "oracle"}}``.
    """
    agent = merged.data.get("agent")
    if not isinstance(agent, dict):
        return merged
    rank = {name: i for i, name in enumerate(order)}
    keys = [k for k in ("type", "kind") if k in agent]
    chosen = sorted(keys, key=lambda k: rank.get(merged.set_by.get(f"agent.{k}", ""), -1))
    if not chosen:
        return merged
    data, set_by = dict(merged.data), dict(merged.set_by)
    settled = dict(agent)
    kind_layer = set_by.get(f"agent.{chosen[-1]}", "")
    settled["type"] = settled.pop(chosen[-1])
    settled.pop("kind", None)
    set_by.pop("agent.kind", None)
    set_by["agent.type"] = kind_layer
    fields = kind_fields(str(settled["type"]))
    for name in list(settled):
        layers = {v for k, v in set_by.items() if _under(k, f"agent.{name}")}
        if fields is not None and name not in fields and kind_layer not in layers:
            del settled[name]
            _forget(set_by, f"agent.{name}")
            set_by[f"agent.{name}"] = "dropped:" + ",".join(sorted(layers, key=lambda n: rank.get(n, -1)))
    data["agent"] = settled
    return Merged(data, set_by)


def _under(key: str, path: str) -> bool:
    """``key`` is ``path`` or one of its leaves (``agent.env.MODE`` is under ``agent.env``)."""
    return key == path or key.startswith((f"{path}.", f"{path}["))


def _merge_into(
    base: dict[str, Any], top: Mapping[str, Any], prefix: str, layer: str, set_by: dict[str, str]
) -> None:
    for key, value in top.items():
        path = f"{prefix}{key}"
        rule = rule_for(path)
        if rule == "deep-merge" and isinstance(value, Mapping):
            current = base.get(key)
            child = dict(current) if isinstance(current, Mapping) else {}
            if not isinstance(current, Mapping):
                _forget(set_by, path)
            _merge_into(child, value, f"{path}.", layer, set_by)
            base[key] = child
            if not value:
                set_by.setdefault(path, layer)
        elif rule == "append":
            current = _as_list(base.get(key))
            added = _as_list(value)
            for i in range(len(added)):
                set_by[f"{path}[{len(current) + i}]"] = layer
            base[key] = current + added
        else:
            _forget(set_by, path)
            base[key] = value
            set_by[path] = layer


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return list(value) if isinstance(value, list) else [value]


def _forget(set_by: dict[str, str], path: str) -> None:
    for key in [k for k in set_by if k == path or k.startswith((f"{path}.", f"{path}["))]:
        del set_by[key]


def provenance(resolved: Mapping[str, Any], set_by: Mapping[str, str]) -> dict[str, str]:
    """For each leaf of ``resolved`` (a task's JSON form), the layer that set it (else ``builtin``).

    Lists that append are itemised (``sandbox.template_sources[1]``); other lists are leaves. Agent
    fields dropped because the winning kind has none of them are listed as ``dropped:<layers>``.
    """
    found = {path: owner(path, set_by) for path in leaf_paths(resolved)}
    found.update({path: layer for path, layer in set_by.items() if layer.startswith("dropped:")})
    return found


def leaf_paths(value: Any, prefix: str = "") -> list[str]:
    if isinstance(value, Mapping) and value:
        return [p for key, child in value.items() for p in leaf_paths(child, f"{prefix}{key}.")]
    path = prefix.rstrip(".")
    if isinstance(value, list) and value and rule_for(path) == "append":
        return [p for i, item in enumerate(value) for p in leaf_paths(item, f"{path}[{i}].")]
    return [path]


def owner(path: str, set_by: Mapping[str, str]) -> str:
    """The layer that set ``path`` or its nearest enclosing field; ``builtin`` when none did."""
    while path:
        if path in set_by:
            return set_by[path]
        path = _INDEX.sub("", path) if _INDEX.search(path) else path.rpartition(".")[0]
    return BUILTIN
