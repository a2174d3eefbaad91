"""``driver: docker`` in a task: the container's image, network, working folder and passed variables.

Example (the original coder_eval spelling)::

    sandbox:
      driver: docker
      docker:
        dockerfile_path: env/Dockerfile      # or image: my-local-image:1 (never pulled)
        build: {args: {PYTHON_VERSION: "3.11"}}
        network: none                        # none | model | bridge (= host: the engine's bridge)
        working_dir: /workspace
        env_passthrough: [HF_TOKEN]          # host variables copied into the container when set
      limits: {max_memory_mb: 1024, max_cpus: 1, max_pids: 256, timeout: 300}

``docker.network`` and the shared ``network`` are one setting: give either (both only when they
agree); so are ``docker.working_dir`` and the shared ``workdir``. With neither image nor Dockerfile
the default image is used (``base_image.py``).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import PurePosixPath
from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from coder_eval.sandbox.base import SandboxPath, check_container_path
from coder_eval.sandbox.spec import Network, SandboxSpecBase, _network_spelling

Resolve = Callable[[str, tuple[str | int, ...], bool], str]
"""The task loader's resolver: (path relative to the task file, its location, a folder?) -> absolute."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class DockerBuild(_Strict):
    """How a task's Dockerfile is built. Example: ``{args: {VERSION: "2"}, extra_args: [--target, test],
    exclude: [tests, solution.sh]}`` (``exclude``: left out of the build context, as ``.dockerignore``
    would, so a ``COPY . /app`` never puts the task's hidden material in the agent's image)."""

    args: dict[str, str] = Field(default_factory=dict, description="--build-arg values.")
    extra_args: list[str] = Field(default_factory=list, description="More `docker build` options.")
    exclude: list[SandboxPath] = Field(
        default_factory=list, description="Paths of the build context the build never sees (hidden material)."
    )
    secrets: dict[str, Any] | list[Any] = Field(
        default_factory=dict, description="Refused: build secrets need BuildKit, which offline builds lack."
    )

    @field_validator("secrets")
    @classmethod
    def _no_secrets(cls, value: dict[str, Any] | list[Any]) -> dict[str, Any] | list[Any]:
        if value:
            raise ValueError(
                "build secrets need BuildKit, and coder_eval builds offline with the legacy builder: "
                "pass the value as a build argument (build.args) or put it in the image another way"
            )
        return value


class DockerMount(_Strict):
    """A trusted host folder shown in the container: ``{source: data, target: /data, read_only: true}``
    (``source`` relative to the task file); the string ``"data:/data[:rw]"`` means the same."""

    source: str = Field(min_length=1, description="Host folder, relative to the task file.")
    target: str = Field(description="Absolute path in the container.")
    read_only: bool = Field(default=True, description="false lets the container write into it.")

    @field_validator("target")
    @classmethod
    def _absolute(cls, value: str) -> str:
        return _container_path(value)

    @model_validator(mode="before")
    @classmethod
    def _short_form(cls, value: Any) -> Any:
        if not isinstance(value, str):
            return value
        parts = value.split(":")
        if len(parts) not in (2, 3) or (len(parts) == 3 and parts[2] not in ("ro", "rw")):
            raise ValueError(f"{value!r}: write a mount as 'SOURCE:TARGET' or 'SOURCE:TARGET:ro|rw'")
        return {"source": parts[0], "target": parts[1], "read_only": len(parts) == 2 or parts[2] == "ro"}


def _container_path(value: str) -> str:
    path = PurePosixPath(value)
    if not path.is_absolute() or ".." in path.parts or str(path) == "/":
        raise ValueError(f"{value!r} must be an absolute folder in the container (not '/', no '..')")
    if path.parts[1] == "coder_eval":
        raise ValueError(f"{value!r}: /coder_eval is the harness's own folder in the container")
    return check_container_path(value)


class DockerOptions(_Strict):
    """The ``docker:`` block (see the module docstring)."""

    image: str | None = Field(default=None, description="A local image (never pulled).")
    dockerfile_path: str | None = Field(default=None, description="A Dockerfile, relative to the task file.")
    build: DockerBuild = Field(default_factory=DockerBuild, description="Build arguments.")
    network: Network | None = Field(default=None, description="none, model or bridge; as `network`.")
    working_dir: str = Field(default="/workspace", description="The workspace in the container.")
    env_passthrough: list[str] = Field(default_factory=list, description="Host variables passed in.")
    env_passthrough_extra: list[str] = Field(default_factory=list, description="More of them.")
    extra_mounts: list[DockerMount] = Field(default_factory=list, description="Host folders shown inside.")

    @field_validator("working_dir")
    @classmethod
    def _workdir(cls, value: str) -> str:
        return _container_path(value)

    @model_validator(mode="after")
    def _one_image(self) -> Self:
        if self.image is not None and self.dockerfile_path is not None:
            raise ValueError("give 'image' or 'dockerfile_path', not both")
        return self

    def passed_through(self) -> dict[str, str]:
        """The ``env_passthrough`` variables that are set on the host, with their values."""
        names = [*self.env_passthrough, *self.env_passthrough_extra]
        return {name: os.environ[name] for name in names if name in os.environ}

    def mounts(self) -> list[DockerMount]:
        return list(self.extra_mounts)


class DockerSpec(SandboxSpecBase):
    """``driver: docker``."""

    driver: Literal["docker"] = "docker"
    docker: DockerOptions = Field(default_factory=DockerOptions, description="The container.")

    @model_validator(mode="before")
    @classmethod
    def _one_network(cls, data: Any) -> Any:
        """``docker.network`` (the original's place for it) sets ``network``; both must agree."""
        if not isinstance(data, dict) or not isinstance(data.get("docker"), dict):
            return data
        inner = data["docker"].get("network")
        if inner is None:
            return data
        if "network" in data and _network_spelling(data["network"]) != _network_spelling(inner):
            raise ValueError(f"network {data['network']!r} and docker.network {inner!r} disagree; give one")
        return {**data, "network": inner}

    @model_validator(mode="after")
    def _one_workdir(self) -> Self:
        """``workdir`` (every isolating driver's) and ``docker.working_dir`` must agree when both are set."""
        given = "working_dir" in self.docker.model_fields_set
        if self.workdir is not None and given and self.workdir != self.docker.working_dir:
            raise ValueError(
                f"workdir {self.workdir!r} and docker.working_dir {self.docker.working_dir!r} disagree; "
                "give one"
            )
        return self

    @property
    def working_dir(self) -> str:
        """The workspace in the container: ``workdir``, else ``docker.working_dir`` (``/workspace``)."""
        return self.workdir or self.docker.working_dir

    def with_task_paths(self, resolve: Resolve) -> Self:
        """``dockerfile_path`` and the mounts' sources made absolute (relative to the task file)."""
        options = self.docker
        update: dict[str, Any] = {}
        if options.dockerfile_path is not None:
            loc = ("sandbox", "docker", "dockerfile_path")
            update["dockerfile_path"] = resolve(options.dockerfile_path, loc, False)
        mounts = [
            m.model_copy(update={"source": resolve(m.source, ("sandbox", "docker", "extra_mounts", i), True)})
            for i, m in enumerate(options.extra_mounts)
        ]
        if mounts:
            update["extra_mounts"] = mounts
        return self.model_copy(update={"docker": options.model_copy(update=update)}) if update else self
