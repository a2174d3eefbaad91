"""Harbor task directories as coder_eval tasks.

Example::

    (task,) = load_tasks([Path("harbor-tasks/hello")])       # a folder holding task.toml
    task.task_id, task.run_limits.task_timeout                 # ('acme.hello', 120.0)

``load_tasks`` (so ``run``, ``plan``, ``validate`` and experiments) takes such a folder, or a folder
of them, wherever it takes task files. A Harbor task maps to:

- the prompt: ``instruction.md`` (leading canary lines dropped, as Harbor does);
- the oracle (``reference_solution``): ``solution/``, shown to the oracle alone at ``/solution``,
  where ``solve.sh`` runs;
- one ``reward_file`` criterion: ``tests/`` is hidden material, shown to the verifier alone at
  ``/tests``, where ``test.sh`` runs; the reward it writes under ``/logs/verifier`` is the score;
- the container's paths: the workspace at the task's working directory (``[environment].workdir``,
  else the Dockerfile's ``WORKDIR``, else ``/app``), fresh ``/logs/agent``, ``/logs/verifier`` and
  ``/logs/artifacts`` in every sandbox; so every file of the task sees what it would see in its
  container (``bwrap`` and ``docker`` show them; ``tempdir`` cannot, and refuses the task);
- ``task.toml``: ``[agent].timeout_sec`` -> ``run_limits.task_timeout``, ``[verifier].timeout_sec``
  -> the criterion's timeout, ``[verifier].env`` and ``[solution].env`` -> the scripts' environment,
  ``[environment]`` env, memory, CPUs and network -> ``sandbox``; ``[task]`` name, description and
  keywords -> ``task_id``, ``description``, ``tags``.

A task whose ``environment/`` has a Dockerfile (or that names an image) runs on the ``docker``
driver (the image is built from the task's ``environment/``, never pulled); one without runs on
coder_eval's own drivers, ``environment/``'s files seeding the workspace. A verifier image of its
own alone, multi-step tasks and Compose environments are refused.
"""

from __future__ import annotations

import shlex
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from coder_eval.errors import SandboxError, TaskError
from coder_eval.run_dir import safe_id
from coder_eval.sandbox.docker.dockerfile import read_dockerfile
from coder_eval.yaml_source import YamlDoc

CONFIG = "task.toml"
COMPOSE_FILES = ("docker-compose.yaml", "docker-compose.yml", "compose.yaml", "compose.yml")
TESTS, SOLUTION = "/tests", "/solution"
LOGS = ("/logs/agent", "/logs/verifier", "/logs/artifacts")
"""Harbor's container paths: tests (the verifier's), the solution (the oracle's), logs (everyone's)."""
REWARD_TXT, REWARD_JSON = "/logs/verifier/reward.txt", "/logs/verifier/reward.json"
DEFAULT_WORKDIR = "/app"
"""The working directory of a task that names none (Harbor's and Terminal-Bench's templates)."""
NETWORK = {"public": "host", "no-network": "model", "allowlist": "model"}
"""Harbor's network modes as coder_eval's: no network but the agent's model endpoint is the closest
to Harbor's no-network (its agents reach their model); an allowlist reaches only that endpoint too."""


class _Section(BaseModel):
    model_config = ConfigDict(extra="ignore")  # Harbor's other fields are not read


class HarborPackage(_Section):
    name: str = Field(description="org/name.")
    description: str = ""
    keywords: list[str] = Field(default_factory=list)


class HarborVerifier(_Section):
    timeout_sec: float = 600.0
    env: dict[str, str] = Field(default_factory=dict)
    environment_mode: str | None = None


class HarborAgent(_Section):
    timeout_sec: float | None = None


class HarborEnvironment(_Section):
    docker_image: str | None = None
    cpus: float | None = None
    memory_mb: int | None = None
    env: dict[str, str] = Field(default_factory=dict)
    workdir: str | None = None
    network_mode: Literal["public", "no-network", "allowlist"] | None = None
    allow_internet: bool | None = None


class HarborSolution(_Section):
    env: dict[str, str] = Field(default_factory=dict)


class HarborConfig(_Section):
    """The parts of Harbor's ``task.toml`` that coder_eval reads."""

    task: HarborPackage | None = None
    verifier: HarborVerifier = Field(default_factory=HarborVerifier)
    agent: HarborAgent = Field(default_factory=HarborAgent)
    environment: HarborEnvironment = Field(default_factory=HarborEnvironment)
    solution: HarborSolution = Field(default_factory=HarborSolution)
    steps: list[Any] | None = None


def is_harbor_task(path: Path) -> bool:
    """A folder with Harbor's ``task.toml``, or that file itself."""
    return (path.is_dir() and (path / CONFIG).is_file()) or (path.name == CONFIG and path.is_file())


def read_config(folder: Path) -> HarborConfig:
    """``task.toml`` read and checked; ``TaskError`` naming the file and field otherwise."""
    path = folder / CONFIG
    try:
        return HarborConfig.model_validate(tomllib.loads(path.read_text(encoding="utf-8")))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise TaskError(f"{path}: cannot read the Harbor task configuration: {exc}") from exc
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise TaskError(f"{path}: {where}: {first['msg']}") from exc


def harbor_doc(path: Path) -> YamlDoc:
    """A Harbor task directory (or its ``task.toml``) as the task document a task file would be
    (``path``: its ``task.toml``), for ``load_tasks`` and experiments to merge layers over and validate."""
    folder = (path if path.is_dir() else path.parent).resolve()
    return YamlDoc(folder / CONFIG, task_data(folder, read_config(folder)))


def task_id_of(folder: Path, config: HarborConfig) -> str:
    """``acme/hello`` -> ``acme.hello``; the folder's name without a ``[task]`` section."""
    return safe_id(config.task.name.replace("/", ".") if config.task else folder.name)


def task_data(folder: Path, config: HarborConfig) -> dict[str, Any]:
    """The task, as the fields a task file would hold."""
    _refuse_unsupported(folder, config)
    _read(folder / "tests" / "test.sh", "the verifier script")
    data: dict[str, Any] = {
        "task_id": task_id_of(folder, config),
        "description": config.task.description if config.task else "",
        "tags": ["harbor", *(config.task.keywords if config.task else [])],
        "initial_prompt": strip_canary(_read(folder / "instruction.md", "the instruction")),
        "sandbox": sandbox_of(folder, config),
        "hidden_tests": {"path": str(folder / "tests"), "mount_point": TESTS},
        "success_criteria": [
            {
                "id": "reward",
                "type": "reward_file",
                "description": "the task's verifier script (tests/test.sh) rewards the work",
                "command": run_script(f"{TESTS}/test.sh", config.verifier.env),
                "reward_file": REWARD_TXT,
                "reward_json": REWARD_JSON,
                "timeout": config.verifier.timeout_sec,
            }
        ],
    }
    if config.agent.timeout_sec is not None:
        data["run_limits"] = {"task_timeout": config.agent.timeout_sec}
    if (folder / "solution" / "solve.sh").is_file():
        data["reference_solution"] = {
            "path": str(folder / "solution"),
            "mount_point": SOLUTION,
            "command": run_script(f"{SOLUTION}/solve.sh", config.solution.env),
        }
    return data


def run_script(path: str, env: dict[str, str]) -> str:
    """The command running a task script as Harbor does (made executable, run by its own ``#!``),
    after ``env``'s exports, from the working directory; no blank line, so the oracle runs it whole.

    Example: ``run_script("/tests/test.sh", {"LEVEL": "2"})`` ->
    ``"export LEVEL=2\n[ -x /tests/test.sh ] || chmod +x /tests/test.sh\n/tests/test.sh"``
    """
    exports = [f"export {name}={shlex.quote(value)}" for name, value in env.items()]
    return "\n".join([*exports, f"[ -x {path} ] || chmod +x {path}", path])


def workdir_of(folder: Path, config: HarborConfig) -> str:
    """Where the task's scripts run: ``[environment].workdir``, else its Dockerfile's last ``WORKDIR``,
    else ``/app``."""
    if config.environment.workdir:
        return config.environment.workdir
    dockerfile = folder / "environment" / "Dockerfile"
    try:
        found = read_dockerfile(dockerfile).workdir if dockerfile.is_file() else None
    except SandboxError as exc:
        raise TaskError(f"{folder}: {exc}") from exc
    return found or DEFAULT_WORKDIR


def sandbox_of(folder: Path, config: HarborConfig) -> dict[str, Any]:
    """The ``sandbox:`` block: coder_eval's own drivers, or ``docker`` for a container environment."""
    environment = config.environment
    network = environment.network_mode or ("no-network" if environment.allow_internet is False else "public")
    sandbox: dict[str, Any] = {
        "env": dict(environment.env),
        "network": NETWORK[network],
        "workdir": workdir_of(folder, config),
        "scratch_dirs": list(LOGS),
    }
    limits = {"max_memory_mb": environment.memory_mb, "max_cpus": environment.cpus}
    if any(value is not None for value in limits.values()):
        sandbox["limits"] = {k: v for k, v in limits.items() if v is not None}
    container = container_of(folder, config)
    if container is not None:
        name, docker = container
        if not docker:
            raise TaskError(f"{folder}: Harbor task {task_id_of(folder, config)!r}: {name} is not supported")
        return {**sandbox, "driver": "docker", "docker": docker}
    seeds = folder / "environment"
    if seeds.is_dir() and any(seeds.iterdir()):
        sandbox["template_sources"] = [{"type": "template_dir", "path": str(seeds)}]
    return sandbox


def container_of(folder: Path, config: HarborConfig) -> tuple[str, dict[str, Any]] | None:
    """What container the task needs (in words) and the ``docker:`` block for it; None if none.

    The verifier runs in the agent's environment, as in Harbor's shared mode: a verifier image of
    its own (``tests/Dockerfile``) beside an environment is not used, and alone it is not supported.
    """
    dockerfile = folder / "environment" / "Dockerfile"
    if config.environment.docker_image:
        return f"the image {config.environment.docker_image!r}", {"image": config.environment.docker_image}
    if dockerfile.is_file():
        return "environment/Dockerfile", {"dockerfile_path": str(dockerfile)}
    if (folder / "tests" / "Dockerfile").is_file():
        return "a verifier image of its own (tests/Dockerfile)", {}
    return None


def _refuse_unsupported(folder: Path, config: HarborConfig) -> None:
    name = task_id_of(folder, config)
    if config.steps:
        raise TaskError(f"{folder}: Harbor task {name!r} has steps; multi-step tasks are not supported")
    compose = [f for f in COMPOSE_FILES if (folder / "environment" / f).is_file()]
    if compose:
        raise TaskError(
            f"{folder}: Harbor task {name!r} uses environment/{compose[0]}; Compose is not supported"
        )


def _read(path: Path, what: str) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise TaskError(f"{path}: cannot read {what} of the Harbor task: {exc}") from exc


def strip_canary(text: str) -> str:
    """The instruction without its leading canary lines (``# ... canary ...``, ``<!-- ... canary ... -->``)
    and the blank lines after them."""
    lines = text.split("\n")
    start = 0
    while start < len(lines) and _is_canary(lines[start].strip()):
        start += 1
    while start < len(lines) and not lines[start].strip():
        start += 1
    return "\n".join(lines[start:])


def _is_canary(line: str) -> bool:
    lowered = line.lower()
    return "canary" in lowered and (
        line.startswith("#") or (line.startswith("<!--") and line.endswith("-->"))
    )
