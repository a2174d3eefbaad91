"""The ``sandbox:`` block of a task: fields every driver shares, in the original coder_eval spelling.

Example::

    sandbox:
      driver: bwrap                       # auto (default) | tempdir | bwrap
      network: model                      # none | model (only the model endpoint) | host
      template_sources:
        - {type: template_dir, path: fixtures/app, mount_point: .}
        - {type: starter_files, files: [{path: NOTES.md, content: "hi"}]}
      python: {env_packages: [requests==2.32.3]}
      record_cli:
        - {tool: gh, exit_code: 0, stdout: "ok"}
        - tool: uip                       # a different answer per call
          responses: [{when: {verb: "projects list"}, stdout: "web\\n"}]
      limits: {max_memory_mb: 512, max_pids: 128}
      workdir: /app                       # the workspace, as commands see it (bwrap, docker)
      scratch_dirs: [/logs/verifier]      # empty writable folders, fresh in every sandbox

Our earlier spellings load to the same models: ``{template_dir: D, target: T, starter_files: [...]}``
for a template entry, ``network: true/false`` (``host``/``none``), ``shims: [{name, target}]``.
Each driver subclasses :class:`SandboxSpecBase` with its own ``driver`` literal (``DRIVERS`` in
``coder_eval.sandbox``); the task's ``sandbox:`` is the union of them, discriminated on ``driver``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Annotated, Any, Literal, Self

from pydantic import (
    AfterValidator,
    AliasChoices,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    field_validator,
    model_validator,
)

from coder_eval.cli_match import CliMatch
from coder_eval.sandbox.base import SandboxPath, check_container_path


def overlap(a: str, b: str) -> bool:
    """Whether one of two absolute folders is the other or inside it.

    Example: ``overlap("/logs", "/logs/verifier")`` -> True; ``overlap("/app", "/application")`` -> False.
    """
    return a == b or a.startswith(b.rstrip("/") + "/") or b.startswith(a.rstrip("/") + "/")


def _network_spelling(value: Any) -> Any:
    """``true``/``false`` (our older spelling) and ``bridge`` (docker's) as network modes."""
    if isinstance(value, bool):
        return "host" if value else "none"
    return "host" if value == "bridge" else value


ContainerPath = Annotated[str, AfterValidator(check_container_path)]
"""An absolute folder a task's scripts name (``/app``, ``/tests``); see ``check_container_path``."""

Network = Annotated[Literal["none", "model", "host"], BeforeValidator(_network_spelling)]
"""``none``: no network; ``model``: only the model endpoint; ``host``: the host's network."""

REFUSED_RECORDERS = frozenset(
    {
        "python",
        "python3",
        "sh",
        "bash",
        "zsh",
        "dash",
        "node",
        "npm",
        "npx",
        "git",
        "uv",
        "pip",
        "env",
        "sudo",
    }
)
"""Shell and interpreter names a recording shim may not take: shadowing them would break the sandbox."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class StarterFile(_Strict):
    """A file written into the sandbox: inline ``content``, or ``source`` (relative to the task file)."""

    path: SandboxPath = Field(description="Where the file goes, relative to the source's mount point.")
    content: str | None = Field(default=None, description="Inline content.")
    source: str | None = Field(default=None, description="A file to copy, relative to the task file.")
    executable: bool = Field(default=False, description="chmod +x after writing.")

    @model_validator(mode="after")
    def _one_origin(self) -> StarterFile:
        if (self.content is None) == (self.source is None):
            raise ValueError("give exactly one of 'content' or 'source'")
        return self


class TemplateDir(_Strict):
    """Copy a folder (relative to the task file) into the sandbox.

    Example: ``{type: template_dir, path: fixtures/app, mount_point: app}``; listing paths in
    ``files`` copies only those; inline ``{path, content}`` entries are written after the copy.
    """

    type: Literal["template_dir"] = "template_dir"
    path: str = Field(validation_alias=AliasChoices("path", "template_dir"), description="Folder to copy.")
    mount_point: SandboxPath = Field(
        default=".", validation_alias=AliasChoices("mount_point", "target"), description="Where it goes."
    )
    files: list[StarterFile | SandboxPath] = Field(
        default_factory=list,
        validation_alias=AliasChoices("files", "starter_files"),
        description="Paths inside the folder to copy (then only those), or inline files.",
    )


class StarterFiles(_Strict):
    """Inline files. Example: ``{type: starter_files, files: [{path: a.py, content: "x = 1"}]}``."""

    type: Literal["starter_files"] = "starter_files"
    files: list[StarterFile] = Field(
        validation_alias=AliasChoices("files", "starter_files"), description="The files to write."
    )
    mount_point: SandboxPath = Field(
        default=".", validation_alias=AliasChoices("mount_point", "target"), description="Base folder."
    )


class RepoSource(_Strict):
    """A git clone (a URL or a local path) at ``commit``, into ``mount_point`` (default ``repo``).

    Example: ``{type: repo, url: "https://github.com/org/app.git", commit: 3f2a9c1}``
    """

    type: Literal["repo"] = "repo"
    url: str = Field(min_length=1, description="Clone URL or a local repository path.")
    commit: str | None = Field(default=None, description="Commit, tag or branch to check out.")
    mount_point: SandboxPath = Field(default="repo", description="Where the clone goes.")


def source_kind(value: Any) -> str:
    """The ``type`` of a template source, inferred for the older spelling (no ``type`` key)."""
    if isinstance(value, dict):
        kind = value.get("type")
        if kind is not None:
            return str(kind)
        return "template_dir" if "template_dir" in value or "path" in value else "starter_files"
    return str(getattr(value, "type", "template_dir"))


TemplateSource = Annotated[
    Annotated[TemplateDir, Tag("template_dir")]
    | Annotated[StarterFiles, Tag("starter_files")]
    | Annotated[RepoSource, Tag("repo")],
    Discriminator(source_kind),
]
"""One entry of ``template_sources``, discriminated on ``type`` (inferred for the older spelling)."""


class CliResponse(_Strict):
    """A canned answer of a ``record_cli`` tool for the calls that match ``when`` (the matcher of the
    ``cli_called`` criterion: ``verb``, ``positional``, ``flags`` ...).

    Example: ``{when: {verb: "projects list"}, stdout: "web\\n"}``; ``exit_code`` defaults to 0 here.
    """

    when: CliMatch = Field(description="Which calls get this answer (verb, positional, flags ...).")
    exit_code: int = Field(default=0, ge=0, le=255, description="Exit code for a matching call.")
    stdout: str = Field(default="", description="Stdout for a matching call.")
    stderr: str = Field(default="", description="Stderr for a matching call.")


class CliRecorder(_Strict):
    """A command on the agent's PATH whose every call the harness records (and answers).

    With ``target`` the call runs that program inside the sandbox (our ``shims:`` spelling);
    without it the harness answers: with the first of ``responses`` whose ``when`` matches the call,
    else with ``exit_code``, ``stdout`` and ``stderr`` (``record_cli:``).
    """

    name: str = Field(
        pattern=r"^[A-Za-z0-9._+-]+$",
        validation_alias=AliasChoices("name", "tool"),
        description="Command name the agent calls.",
    )
    target: SandboxPath | None = Field(default=None, description="A program in the sandbox to run.")
    exit_code: int = Field(default=1, description="Canned exit code (no target).")
    stdout: str = Field(default="", description="Canned stdout (no target).")
    stderr: str = Field(default="", description="Canned stderr (no target).")
    responses: list[CliResponse] = Field(
        default_factory=list, description="Answers for the calls that match, tried in order (no target)."
    )
    log: SandboxPath | None = Field(
        default=None, description="Workspace copy of the log (the harness keeps its own record)."
    )

    @model_validator(mode="after")
    def _answers_or_target(self) -> CliRecorder:
        if self.target is not None and self.responses:
            raise ValueError("responses are canned answers: a recorder with a target runs it instead")
        return self

    def answer(self, args: Sequence[str]) -> tuple[int, str, str]:
        """The canned (exit code, stdout, stderr) for a call with ``args``: the first matching response,
        else the recorder's own."""
        chosen = next((r for r in self.responses if r.when.matches(args)), None)
        source = chosen if chosen is not None else self
        return source.exit_code, source.stdout, source.stderr

    @field_validator("name")
    @classmethod
    def _not_a_shell(cls, value: str) -> str:
        if value in REFUSED_RECORDERS or re.fullmatch(r"python3?(\.\d+)?", value):
            raise ValueError(
                f"{value!r} is a shell or interpreter; recording it would break the sandbox: "
                "record the tool the agent should call instead"
            )
        return value


class PackageEnv(_Strict):
    """A per-sandbox environment: ``{env_packages: [requests==2.32.3]}``; ``{}`` is an empty one."""

    env_packages: list[str] = Field(default_factory=list, description="Packages to install.")


DEFAULT_MEMORY_MB = 4096
DEFAULT_PIDS = 1024
DEFAULT_FILE_MB = 1024
DEFAULT_WORKSPACE_MB = 1024
DEFAULT_WORKSPACE_FILES = 50_000
DEFAULT_WORKSPACE_DEPTH = 256


class Limits(_Strict):
    """Resource limits. Enforcement depends on the driver (see docs/sandbox.md).

    Every task has them: a task that sets none still cannot take the host down with a fork bomb, a
    memory bomb, a huge file or a flood of files. ``null`` lifts a limit (``max_memory_mb: null``).
    Memory and processes are enforced by a control group or the container engine; without either,
    only a value the task sets is enforced, through an rlimit (the defaults would count the user's
    other processes, or the address space a JavaScript engine reserves).
    """

    timeout: float = Field(default=300.0, gt=0, description="Seconds a command may run when not told.")
    max_memory_mb: int | None = Field(
        default=DEFAULT_MEMORY_MB, ge=16, description="Memory of all the sandbox's processes together."
    )
    max_cpus: float | None = Field(default=None, gt=0, description="CPUs (docker).")
    max_pids: int | None = Field(default=DEFAULT_PIDS, ge=4, description="Processes and threads.")
    max_disk_mb: int | None = Field(
        default=DEFAULT_FILE_MB, ge=1, description="Largest file a process may write."
    )
    max_cpu_seconds: int | None = Field(default=None, ge=1, description="CPU time per process.")
    max_workspace_mb: int | None = Field(
        default=DEFAULT_WORKSPACE_MB,
        ge=1,
        description="Apparent size of all the workspace's files when it is snapshotted.",
    )
    max_workspace_files: int | None = Field(
        default=DEFAULT_WORKSPACE_FILES,
        ge=1,
        description="Files, folders and links in the workspace when it is snapshotted.",
    )
    max_workspace_depth: int | None = Field(
        default=DEFAULT_WORKSPACE_DEPTH,
        ge=1,
        description="Levels of folders in the workspace when it is snapshotted (a/b/c.txt: 3).",
    )

    def set_by_task(self, name: str) -> bool:
        """Whether the task (or an experiment) wrote limit ``name``, rather than taking the default."""
        return name in self.model_fields_set and getattr(self, name) is not None


class SandboxSpecBase(_Strict):
    """Fields every driver shares."""

    driver: str = Field(default="auto", description="Sandbox driver.")
    template_sources: list[TemplateSource] = Field(default_factory=list, description="Seed, in order.")
    mock_path_dirs: list[SandboxPath] = Field(
        default_factory=list, description="Sandbox dirs made executable and put first on the agent's PATH."
    )
    shims: list[CliRecorder] = Field(default_factory=list, description="Recorders that run a target.")
    record_cli: list[CliRecorder] = Field(default_factory=list, description="Recorders with canned answers.")
    env: dict[str, str] = Field(default_factory=dict, description="Extra environment variables.")
    network: Network = Field(default="model", description="none, model (model endpoint only), host.")
    python: PackageEnv | None = Field(default=None, description="A virtualenv first on the agent's PATH.")
    node: PackageEnv | None = Field(default=None, description="npm packages in the sandbox.")
    limits: Limits = Field(default_factory=Limits, description="Resource limits.")
    ignore_patterns: list[str] = Field(
        default_factory=list, description="Left out of snapshots and judge copies (gitignore style)."
    )
    workdir: ContainerPath | None = Field(
        default=None, description="Where commands see the workspace (bwrap, docker): /app."
    )
    scratch_dirs: list[ContainerPath] = Field(
        default_factory=list, description="Empty writable folders at these paths in every sandbox."
    )

    @model_validator(mode="after")
    def _checks(self) -> SandboxSpecBase:
        if any(isinstance(s, RepoSource) for s in self.template_sources[1:]):
            raise ValueError("template_sources: a 'repo' source must come first")
        names = [r.name for r in self.recorders]
        if len(names) != len(set(names)):
            raise ValueError(f"recorded CLI names must be unique, got {names}")
        for folder in self.scratch_dirs:
            if self.workdir is not None and overlap(folder, self.workdir):
                raise ValueError(f"scratch_dirs: {folder!r} overlaps the workspace {self.workdir!r}")
        return self

    def with_task_paths(self, resolve: Callable[[str, tuple[str | int, ...], bool], str]) -> Self:
        """This spec with the driver's own task-relative paths made absolute by ``resolve`` (the task
        loader's, which also reports a missing one); the loader resolves template sources itself."""
        return self

    @property
    def recorders(self) -> list[CliRecorder]:
        """``shims`` then ``record_cli``, each with its workspace log path filled in."""
        shims = [
            r.model_copy(update={"log": r.log or f".coder_eval/calls/{r.name}.jsonl"}) for r in self.shims
        ]
        canned = [r.model_copy(update={"log": r.log or "cli_mocks/calls.jsonl"}) for r in self.record_cli]
        return shims + canned
