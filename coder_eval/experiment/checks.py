"""Warnings about a plan that would run but silently measure the wrong thing.

- an ``agent.plugins`` entry from which no skill would load (``skill_arms.py``);
- two variants that resolve to the same configuration for every task (their difference is noise);
- a criterion using ``${row.x}`` where ``x`` is empty in some rows (``expected`` / ``expected_skill``
  of labelling criteria are exempt: there an empty value is the negative label ``none``);
- ``agent.model: scripted`` with no ``scripted`` block (every episode would be invalid);
- a real model whose key is not set on the host (``credentials.py``: agents, judges, simulated users);
- a prompt ``replace`` that matches no selected task's prompt;
- an agent field another layer set that the task's agent kind does not have (left out);
- ``driver: auto`` falling back to ``tempdir`` (not a security boundary) where bubblewrap cannot run;
- a ``run_limits.turn_timeout`` that ends every turn the task can have before its larger
  ``task_timeout`` could (the task timeout then never applies);
- FIFOs, sockets, devices and symlink loops the task search or a task's folders hold: left out
  unopened (of the task search, and of every sandbox);
- a relative plugin path found from the working directory, not next to the file that names it.

Example: ``for line in plan_warnings(resolution): print("warning:", line)``

And refusals (:func:`check_environments`, exit 2 from ``plan``, ``run`` and ``validate``): a task
whose environment cannot run here as written, never run in another one: a docker image it needs
that is not on this machine (a named one, or one its Dockerfile starts ``FROM``), and container
paths (``/app``, ``/tests``) on a driver that cannot show them (``tempdir``, or ``auto`` falling
back to it).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from coder_eval.criteria import CRITERIA
from coder_eval.errors import InputError
from coder_eval.experiment.credentials import missing_keys
from coder_eval.experiment.merge import SETTINGS
from coder_eval.experiment.resolve import Resolution, SourceFile
from coder_eval.experiment.skill_arms import skill_warnings
from coder_eval.sandbox import DockerSpec, resolve_driver
from coder_eval.sandbox.bwrap import interpreter_folders, unshowable
from coder_eval.sandbox.docker.images import image_problem
from coder_eval.sandbox.provision import fixed_paths_problem
from coder_eval.task import TaskSpec
from coder_eval.task.dataset import ROW_REF
from coder_eval.task.files import special_files

LABEL_FIELDS = {kind: spec.label_field for kind, spec in CRITERIA.items() if spec.label_field}
"""Criterion fields where an empty value means the label ``none`` on purpose (each labelling
criterion declares its ``label_field``)."""


def plan_warnings(resolution: Resolution) -> list[str]:
    """Every warning, each once."""
    found = [
        *_driver_fallback(resolution),
        *_dropped_agent_fields(resolution),
        *skill_warnings(resolution),
        *_identical_variants(resolution),
        *(w for source in resolution.sources for w in _empty_row_fields(source)),
        *_scripted_without_script(resolution),
        *missing_keys(resolution),
        *_turn_timeout_warnings(resolution),
        *(
            f"variant {variant!r}: prompt_mutations.replace {find!r} matches no selected task's prompt"
            for variant, find in resolution.unmatched
        ),
        *resolution.skipped,
        *resolution.notes,
        *_special_files(resolution),
    ]
    return list(dict.fromkeys(found))


def _special_files(resolution: Resolution) -> Iterator[str]:
    seen: set[int] = set()
    for plan in resolution.plans:
        if id(plan.task) not in seen:
            seen.add(id(plan.task))
            for special in special_files(plan.task):
                yield f"task {plan.task.task_id!r}: {special} is left out of the sandbox, unopened"


def _dropped_agent_fields(resolution: Resolution) -> Iterator[str]:
    """Agent fields another layer set that the chosen agent has not. A task's own fields for the agent
    it was written for are left out silently: whoever chose another agent (``--agent oracle``, a
    variant) meant to; so are the ``settings`` layer's (a ``DEFAULT_*`` setting is for the kinds that
    have the field)."""
    for plan in resolution.plans:
        for path, layer in plan.provenance.items():
            if layer.startswith("dropped:") and layer not in ("dropped:task", f"dropped:{SETTINGS}"):
                yield (
                    f"{path} (set by {layer.removeprefix('dropped:')}) is not a field of the "
                    f"{plan.task.agent.type!r} agent of task {plan.task.task_id!r}: it is left out"
                )


def _driver_fallback(resolution: Resolution) -> Iterator[str]:
    if any(plan.task.sandbox.driver == "auto" for plan in resolution.plans):
        _, warning = asyncio.run(resolve_driver("auto"))
        if warning is not None:
            yield warning


def _identical_variants(resolution: Resolution) -> Iterator[str]:
    configs: dict[str, dict[str, str]] = {}
    for plan in resolution.plans:
        task = plan.task.model_dump(mode="json", exclude={"source_path"})
        configs.setdefault(plan.variant_id, {})[plan.task.task_id] = json.dumps(task, sort_keys=True)
    ids = list(configs)
    for i, a in enumerate(ids):
        for b in ids[i + 1 :]:
            if configs[a] == configs[b] and resolution.repeats[a] == resolution.repeats[b]:
                yield (
                    f"variants {a!r} and {b!r} resolve to the same configuration for every task: "
                    "comparing them measures only noise"
                )


def _empty_row_fields(source: SourceFile) -> Iterator[str]:
    for i, criterion in enumerate(source.data.get("success_criteria") or []):
        for name in sorted(_row_refs(criterion)):
            empty = [t.task_id for t in source.tasks if _is_empty(t, name)]
            if empty:
                shown = ", ".join(empty[:5]) + (", ..." if len(empty) > 5 else "")
                yield (
                    f"{source.path}: success_criteria[{i}] uses ${{row.{name}}}, empty in "
                    f"{len(empty)} of {len(source.tasks)} rows ({shown}): the criterion checks nothing there"
                )


def _row_refs(criterion: Any) -> set[str]:
    if not isinstance(criterion, dict):
        return set()
    exempt = LABEL_FIELDS.get(str(criterion.get("type")))
    text = json.dumps({k: v for k, v in criterion.items() if k != exempt})
    return set(ROW_REF.findall(text))


def _is_empty(task: TaskSpec, name: str) -> bool:
    value = (task.dataset_row or {}).get(name)
    return value is None or (isinstance(value, str) and not value.strip())


def _scripted_without_script(resolution: Resolution) -> Iterator[str]:
    for plan in resolution.plans:
        if plan.task.agent.model == "scripted" and plan.task.scripted is None:
            yield (
                f"variant {plan.variant_id!r}: agent.model is 'scripted' but task {plan.task.task_id!r} has "
                "no scripted block: its episodes would be invalid"
            )


def _turn_timeout_warnings(resolution: Resolution) -> Iterator[str]:
    """``turn_timeout`` x the turns a task can have < ``task_timeout``: the task timeout never applies.

    A task has one turn, plus the simulated user's ``max_turns`` in a dialog task and the further
    attempts of ``max_iterations``. ``turn_timeout`` and ``max_iterations`` are read only when the
    task model has them.
    """
    for plan in resolution.plans:
        task = plan.task
        turn = getattr(task.run_limits, "turn_timeout", None)
        if plan.repeat or turn is None:
            continue
        turns = 1 + (task.simulation.max_turns if task.simulation is not None else 0)
        turns += max(0, (getattr(task, "max_iterations", None) or 1) - 1)
        whole = task.run_limits.task_timeout
        if turn * turns < whole:
            yield (
                f"variant {plan.variant_id!r}, task {task.task_id!r}: run_limits.turn_timeout ({turn:g} s) "
                f"x {turns} turn(s) ends the episode before task_timeout ({whole:g} s) can: the task "
                "timeout never applies"
            )


def check_environments(tasks: Iterable[TaskSpec]) -> None:
    """``InputError`` naming every task whose environment cannot run here, with what to do."""
    unique = list({id(task): task for task in tasks}.values())
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        problems = asyncio.run(environment_problems(unique))
    else:  # a notebook's loop runs: check on a thread of its own
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            problems = pool.submit(asyncio.run, environment_problems(unique)).result()
    if problems:
        raise InputError("\n".join(problems))


async def environment_problems(tasks: Sequence[TaskSpec]) -> list[str]:
    """One line per task whose environment cannot run here (see the module docstring)."""
    found: list[str] = []
    for task in tasks:
        driver, _ = await resolve_driver(task.sandbox.driver)
        paths = task.container_paths()
        problem = fixed_paths_problem(driver, task.sandbox.workdir, paths)
        if problem is None and driver == "bwrap":
            problem = unshowable(paths, interpreter_folders())
        if problem is None and isinstance(task.sandbox, DockerSpec):
            options = task.sandbox.docker
            dockerfile = Path(options.dockerfile_path) if options.dockerfile_path else None
            build = options.build
            problem = await image_problem(
                image=options.image, dockerfile=dockerfile, args=build.args, exclude=build.exclude
            )
        if problem is not None:
            found.append(f"task {task.task_id!r} ({task.source_path}) cannot run here: {problem}")
    return found
