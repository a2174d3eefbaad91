"""Before a run starts on a dask cluster: can every worker run what it will be handed?

Example::

    needs = Needs.of(plans)                  # versions, drivers, images, agent CLIs of the run
    await admit(client, needs, "tcp://10.0.0.5:8786")   # InputError (exit 2) naming each mismatch

Each worker reports, once, what it has (:func:`worker_facts`, run there by ``client.run``): its
coder_eval and Python versions, whether each sandbox driver the tasks name runs there (``auto``
must pick the driver it picks here, so no worker quietly falls back to ``tempdir``), the docker
images the tasks name (or their Dockerfiles start from), and the agents' CLIs. A worker that lacks
any of it is one error at the start of the run, with what to install, instead of one ``invalid``
episode per task. A worker that joins later is not asked: start every worker from the same image.
"""

from __future__ import annotations

import asyncio
import importlib
import platform
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from coder_eval.episode.plan import EpisodePlan
from coder_eval.errors import InputError, SandboxError
from coder_eval.executors.dask.bundles import check_travels
from coder_eval.sandbox import resolve_driver
from coder_eval.sandbox.docker.base_image import BASE_REPOSITORY
from coder_eval.sandbox.docker.dockerfile import read_dockerfile
from coder_eval.version import __version__

AGENT_CLIS = {
    "claude-code": "coder_eval.agents.claude_code.launcher:bundled_cli",
    "codex": "coder_eval.agents.codex.agent:codex_binary",
    "gemini": "coder_eval.agents.gemini.agent:gemini_script",
    "opencode": "coder_eval.agents.opencode.agent:opencode_binary",
}
"""Agent kind -> the function finding its CLI (None: not installed); other kinds need none."""


@dataclass(frozen=True)
class Needs:
    """What a run asks of a worker."""

    coder_eval: str
    python: str
    drivers: dict[str, str]
    """Each driver the tasks name -> the one it is here (``auto`` -> ``bwrap`` or ``tempdir``)."""
    images: tuple[str, ...]
    agents: tuple[str, ...]

    @classmethod
    async def of(cls, plans: Sequence[EpisodePlan]) -> Needs:
        tasks = {id(p.task): p.task for p in plans}.values()
        named = sorted({t.sandbox.driver for t in tasks})
        drivers = {name: (await resolve_driver(name))[0] for name in named}
        images = sorted({image for t in tasks for image in _images(t.sandbox)})
        agents = sorted({t.agent.kind for t in tasks if t.agent.kind in AGENT_CLIS})
        return cls(__version__, _python(), drivers, tuple(images), tuple(agents))


def _images(spec: object) -> list[str]:
    """The images a docker sandbox needs on the machine that runs it: the one it names, or those its
    Dockerfile starts ``FROM`` (but the default image, which every worker builds itself)."""
    options = getattr(spec, "docker", None)
    if options is None:
        return []
    if options.image is not None:
        return [options.image]
    if options.dockerfile_path is None:
        return []
    try:
        bases = read_dockerfile(Path(options.dockerfile_path), options.build.args).bases
    except SandboxError:
        return []  # the build itself says what is wrong with it
    return [base for base in bases if base.split(":", 1)[0] != BASE_REPOSITORY]


def _python() -> str:
    return ".".join(platform.python_version_tuple()[:2])


async def worker_facts(needs: dict[str, Any]) -> dict[str, Any]:
    """On a worker: what it has of ``needs`` (a :class:`Needs` as a dict)."""
    drivers = {name: (await resolve_driver(name))[0] for name in needs["drivers"]}
    problems = {name: await _driver_problem(name) for name in set(drivers.values())}
    images = [image for image in needs["images"] if not await _has_image(image)]
    agents = [kind for kind in needs["agents"] if _cli(kind) is None]
    return {
        "coder_eval": __version__,
        "python": _python(),
        "drivers": drivers,
        "driver_problems": {k: v for k, v in problems.items() if v},
        "missing_images": images,
        "missing_agents": agents,
    }


async def _driver_problem(name: str) -> str | None:
    from coder_eval.sandbox import DRIVERS  # the table, with each driver's availability check

    driver = DRIVERS.get(name, (None, None))[1]
    check = getattr(driver, "check_available", None)
    if check is None:
        return None
    try:
        await check()
    except Exception as exc:
        return str(exc)
    return None


async def _has_image(image: str) -> bool:
    from coder_eval.sandbox.docker.base_image import image_exists

    return await asyncio.to_thread(image_exists, image)


def _cli(kind: str) -> object | None:
    module, _, function = AGENT_CLIS[kind].partition(":")
    try:
        found: object | None = getattr(importlib.import_module(module), function)()
    except ImportError:
        return None
    return found


def mismatches(needs: Needs, facts: dict[str, Any]) -> list[str]:
    """What one worker's ``facts`` lack of ``needs``, each with what to do."""
    found: list[str] = []
    for what in ("coder_eval", "python"):
        if facts[what] != getattr(needs, what):
            found.append(f"{what} {facts[what]} (this process: {getattr(needs, what)}): install the same")
    for name, here in needs.drivers.items():
        there = facts["drivers"].get(name)
        if there != here:
            found.append(f"sandbox driver {name!r} is {there!r} there, {here!r} here: install bubblewrap")
    found += [why for _, why in sorted(facts["driver_problems"].items())]  # each names its driver
    found += [
        f"docker image {image!r} is missing: build or load it there" for image in facts["missing_images"]
    ]
    found += [f"the {kind} agent's CLI is missing: install it there" for kind in facts["missing_agents"]]
    return found


async def admit(client: Any, plans: Sequence[EpisodePlan], where: str) -> None:
    """``InputError`` (exit 2) before any episode starts when a task's files cannot travel or a
    worker of the cluster at ``where`` lacks what the run needs (see the module docstring)."""
    for task in {id(p.task): p.task for p in plans}.values():
        check_travels(task)
    needs = await Needs.of(plans)
    facts: dict[str, dict[str, Any]] = await client.run(worker_facts, asdict(needs))
    problems = [f"worker {w}: {m}" for w, f in sorted(facts.items()) for m in mismatches(needs, f)]
    if problems:
        raise InputError(
            f"the dask cluster at {where} cannot run this run's episodes:\n  "
            + "\n  ".join(problems)
            + "\nevery worker needs what this process has (docs/executors.md, 'Workers')"
        )
