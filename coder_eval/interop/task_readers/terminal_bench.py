"""Terminal-Bench task folders (the layout before Harbor) as coder_eval tasks.

Example::

    (task,) = load_tasks([Path("tb-tasks/hello-world")])     # task.yaml, run-tests.sh, Dockerfile ...
    task.task_id, task.sandbox.workdir                          # ('hello-world', '/app')

A folder holding ``task.yaml`` and ``run-tests.sh`` (with ``Dockerfile``, ``docker-compose.yaml``,
``solution.sh`` and ``tests/`` beside them) is read directly, with the container paths Terminal-Bench
gives its scripts, the same as a Harbor task's (``harbor.py``):

- the prompt: ``task.yaml``'s ``instruction``; ``tags`` with ``terminal-bench``;
- the environment: the ``docker`` driver, built from the compose file's main service (``client``,
  else the first) and its build context (the Dockerfile there), never pulled, without the task's
  hidden material (``tests/``, ``run-tests.sh``, ``solution.sh``) unless the Dockerfile copies it by
  name; its ``environment``
  and a ``working_dir`` are kept, ``TEST_DIR=/tests`` is set as Terminal-Bench sets it; the
  workspace is at ``working_dir``, else the Dockerfile's ``WORKDIR``, else ``/app``;
- the verifier: ``tests/`` at ``/tests`` (the verifier's alone) with ``run-tests.sh`` beside it,
  run by ``bash`` from the working directory; its exit status is the reward (0: 1, else 0), as
  Harbor's Terminal-Bench mapper defines it, written by coder_eval after the script ended, so a
  script that ends with ``exit`` still has its reward; ``max_test_timeout_sec`` is its timeout;
- the oracle: ``solution.sh``, shown to the oracle alone at ``/solution``, run by ``bash``;
- ``max_agent_timeout_sec`` -> ``run_limits.task_timeout``.

A ``solution.yaml`` (keystrokes for a terminal) and a compose file with more than one service are
refused by name. Other ``task.yaml`` fields (author, difficulty, parser) are not read.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from coder_eval.errors import SandboxError, TaskError
from coder_eval.interop.task_readers.harbor import DEFAULT_WORKDIR, SOLUTION, TESTS
from coder_eval.run_dir import safe_id
from coder_eval.sandbox.docker.dockerfile import instructions, read_dockerfile
from coder_eval.yaml_source import YamlDoc, explain, read_yaml

CONFIG = "task.yaml"
RUNNER = "run-tests.sh"
COMPOSE = "docker-compose.yaml"
LOGS = "/logs"
REWARD = f"{LOGS}/verifier/reward.txt"
HIDDEN = ("tests", RUNNER, "solution.sh", "solution.yaml")
"""The task folder's entries no agent may see (and the build context leaves out)."""
DEFAULT_ENV = {"TEST_DIR=${T_BENCH_TEST_DIR}"}
"""Compose environment entries Terminal-Bench itself fills in (replaced by ``TEST_DIR=/tests``)."""


class TerminalBenchConfig(BaseModel):
    """The parts of Terminal-Bench's ``task.yaml`` that coder_eval reads."""

    model_config = ConfigDict(extra="ignore")
    instruction: str = Field(min_length=1, description="The prompt.")
    tags: list[str] = Field(default_factory=list)
    max_agent_timeout_sec: float = Field(default=360.0, gt=0)
    max_test_timeout_sec: float = Field(default=60.0, gt=0)


class MainService(BaseModel):
    """The compose file's main service, as far as coder_eval reads it."""

    model_config = ConfigDict(extra="ignore")
    build: str | dict[str, Any] | None = None
    image: str | None = None
    environment: list[str] | dict[str, Any] = Field(default_factory=list)
    working_dir: str | None = None


def is_terminal_bench_task(path: Path) -> bool:
    """A folder holding ``task.yaml`` and ``run-tests.sh``, or that ``task.yaml`` itself."""
    folder = path if path.is_dir() else path.parent
    named = path.is_dir() or path.name == CONFIG
    return named and (folder / CONFIG).is_file() and (folder / RUNNER).is_file()


def terminal_bench_doc(path: Path) -> YamlDoc:
    """A Terminal-Bench task folder as the task document a task file would be (its ``task.yaml``)."""
    folder = (path if path.is_dir() else path.parent).resolve()
    doc = read_yaml(folder / CONFIG, kind=TaskError, what="Terminal-Bench task")
    try:
        config = TerminalBenchConfig.model_validate(doc.data)
    except ValidationError as exc:
        raise TaskError(explain(exc, doc, TerminalBenchConfig)) from exc
    return YamlDoc(folder / CONFIG, task_data(folder, config), doc.lines)


def task_data(folder: Path, config: TerminalBenchConfig) -> dict[str, Any]:
    """The task, as the fields a task file would hold."""
    if (folder / "solution.yaml").is_file():
        raise TaskError(
            f"{folder}: solution.yaml (keystrokes for a terminal) is not supported: write it as solution.sh"
        )
    data: dict[str, Any] = {
        "task_id": safe_id(folder.name),
        "tags": ["terminal-bench", *config.tags],
        "initial_prompt": config.instruction,
        "sandbox": sandbox_of(folder),
        "run_limits": {"task_timeout": config.max_agent_timeout_sec},
        "success_criteria": [
            {
                "id": "reward",
                "type": "reward_file",
                "description": "the task's run-tests.sh passes (exit status 0)",
                "command": verifier_command(),
                "reward_file": REWARD,
                "timeout": config.max_test_timeout_sec,
            }
        ],
    }
    if (folder / "tests").is_dir():
        data["hidden_tests"] = {"path": str(folder / "tests"), "mount_point": TESTS}
    if (folder / "solution.sh").is_file():
        command = f"bash {SOLUTION}/solution.sh"
        data["reference_solution"] = {
            "path": str(folder / "solution.sh"),
            "mount_point": SOLUTION,
            "command": command,
        }
    return data


def verifier_command() -> str:
    """``run-tests.sh`` copied beside the tests from the task's folder (``$TASK_DIR``, read-only in
    the verifier) and run there; its exit status written as the reward once it ended."""
    return "\n".join(
        [
            f'mkdir -p {TESTS} && cp "$TASK_DIR/{RUNNER}" {TESTS}/{RUNNER}',
            f"bash {TESTS}/{RUNNER}",
            "code=$?",
            f"mkdir -p {LOGS}/verifier",
            f'if [ "$code" -eq 0 ]; then echo 1; else echo 0; fi > {REWARD}',
            'exit "$code"',
        ]
    )


def sandbox_of(folder: Path) -> dict[str, Any]:
    """The ``sandbox:`` block: the ``docker`` driver with the main service's image or Dockerfile."""
    service = main_service(folder)
    env = {"TEST_DIR": TESTS, **_environment(service.environment)}
    sandbox: dict[str, Any] = {"driver": "docker", "env": env, "network": "host", "scratch_dirs": [LOGS]}
    if not (folder / "tests").is_dir():
        sandbox["scratch_dirs"].append(TESTS)  # where the verifier puts run-tests.sh
    image = _plain(service.image)
    if service.build is None and image is not None:
        sandbox["docker"] = {"image": image}
        sandbox["workdir"] = _plain(service.working_dir) or DEFAULT_WORKDIR
        return sandbox
    build = service.build or "."
    context = build if isinstance(build, str) else build.get("context", ".")
    name = "Dockerfile" if isinstance(build, str) else build.get("dockerfile", "Dockerfile")
    dockerfile = (folder / str(context) / str(name)).resolve()
    if not dockerfile.is_file():
        raise TaskError(f"{folder}: the Terminal-Bench task's Dockerfile {dockerfile} is missing")
    try:
        workdir = read_dockerfile(dockerfile).workdir
    except SandboxError as exc:
        raise TaskError(f"{folder}: {exc}") from exc
    sandbox["docker"] = {"dockerfile_path": str(dockerfile)}
    if dockerfile.parent == folder:
        sandbox["docker"]["build"] = {"exclude": hidden_from_build(folder, dockerfile)}
    sandbox["workdir"] = _plain(service.working_dir) or workdir or DEFAULT_WORKDIR
    return sandbox


def hidden_from_build(folder: Path, dockerfile: Path) -> list[str]:
    """The task's hidden material in its build context (the task folder): left out of the build, so
    a ``COPY . /app`` never shows the agent the tests or the solution; kept when the Dockerfile copies
    it by name (the author's choice, as Harbor's mapper keeps it)."""
    named = {
        source.removeprefix("./").strip("/").split("/", 1)[0]
        for word, rest in instructions(dockerfile.read_text(encoding="utf-8", errors="replace"))
        if word in ("COPY", "ADD")
        for source in [w for w in rest.split() if not w.startswith("--")][:-1]
    }
    return [name for name in HIDDEN if (folder / name).exists() and name not in named]


def main_service(folder: Path) -> MainService:
    """The compose file's main service (``client``, else the first); a plain build of the folder's
    Dockerfile without a compose file. ``TaskError`` for a file with more than one service."""
    path = folder / COMPOSE
    if not path.is_file():
        return MainService(build=".")
    doc = read_yaml(path, kind=TaskError, what="Compose file")
    services = doc.data.get("services")
    if not isinstance(services, dict) or not services:
        raise TaskError(f"{path}: no services; a Terminal-Bench task's compose file names its main service")
    if len(services) > 1:
        raise TaskError(
            f"{path}: {len(services)} services ({', '.join(map(str, services))}); tasks that need more "
            "than one container are not supported"
        )
    name = "client" if "client" in services else next(iter(services))
    try:
        return MainService.model_validate(services[name] or {})
    except ValidationError as exc:
        raise TaskError(explain(exc, doc, MainService, ("services", name))) from exc


def _environment(entries: list[str] | dict[str, Any]) -> dict[str, str]:
    """The main service's variables, without those Terminal-Bench fills in itself."""
    items = [f"{k}={v}" for k, v in entries.items()] if isinstance(entries, dict) else list(entries)
    pairs = (item.split("=", 1) for item in items if item not in DEFAULT_ENV and "=" in item)
    return {name: value for name, value in pairs}


def _plain(value: str | None) -> str | None:
    """A compose value without Terminal-Bench's ``${...}`` placeholders, else None."""
    return value if value and "${" not in value else None
