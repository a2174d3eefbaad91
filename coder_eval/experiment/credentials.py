"""Model keys a plan needs that the host does not have: said before a run starts, not 168 invalid
episodes later.

Each part of a task that talks to a real model declares the host variables it authenticates with
(``model_keys()``: the agent's spec, each criterion, the simulated user); a scripted model, and the
``oracle``, ``none`` and ``command`` agents, need none. ``{from_env: NAME}`` in ``agent.env`` needs
``NAME`` too.

Example::

    missing_keys(resolution, {})
    # ['ANTHROPIC_API_KEY is not set: the claude-code agent (model claude-sonnet-4-6) cannot reach
    #   its model in 16 episode(s) (variants baseline, with_skill); those episodes would be invalid:
    #   set it, or use model: scripted (offline)']
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from typing import NamedTuple

from coder_eval.agents.spec import FromEnv
from coder_eval.experiment.resolve import Resolution
from coder_eval.task import TaskSpec


def missing_keys(resolution: Resolution, host: Mapping[str, str] | None = None) -> list[str]:
    """One warning per model user whose keys are all unset in ``host`` (default: this environment)."""
    host = os.environ if host is None else host
    found: dict[Need, list[str]] = {}
    for plan in resolution.plans:
        for need in _needs(plan.task):
            if not any(host.get(name) for name in need.keys):
                found.setdefault(need, []).append(plan.variant_id)
    return [_warning(need, variants) for need, variants in found.items()]


CANNOT_SET = "cannot be set"


class Need(NamedTuple):
    """A part of a task that needs one of ``keys`` set on the host, and what happens without."""

    user: str
    keys: tuple[str, ...]
    without: str = "cannot reach its model"


def _needs(task: TaskSpec) -> Iterator[Need]:
    agent = task.agent
    if agent.model_keys():
        model = f"model {agent.model}" if agent.model else "its default model"
        yield Need(f"the {agent.kind} agent ({model})", agent.model_keys())
    for name, value in getattr(agent, "env", {}).items():
        if isinstance(value, FromEnv):
            yield Need(f"agent.env.{name} of the {agent.kind} agent", (value.from_env,), CANNOT_SET)
    for i, criterion in enumerate(task.success_criteria):
        if criterion.model_keys():
            model = getattr(criterion, "model", "?")
            yield Need(
                f"criterion {criterion.id or i} ({criterion.type}, model {model})", criterion.model_keys()
            )
    if task.simulation is not None and task.simulation.model_keys():
        yield Need(f"the simulated user (model {task.simulation.model})", task.simulation.model_keys())


def _warning(need: Need, variants: list[str]) -> str:
    unset = f"{need.keys[0]} is not set" if len(need.keys) == 1 else f"none of {', '.join(need.keys)} is set"
    shown = ", ".join(dict.fromkeys(variants))
    label = "variants" if len(set(variants)) > 1 else "variant"
    remedy = (
        "set it on the host" if need.without == CANNOT_SET else "set it, or use model: scripted (offline)"
    )
    return (
        f"{unset}: {need.user} {need.without} in {len(variants)} episode(s) ({label} {shown}); "
        f"those episodes would be invalid: {remedy}"
    )
