"""Task files: the YAML a suite author writes, validated once at load time.

Example (``tasks/examples/hello.yaml``)::

    task_id: hello
    initial_prompt: Write "hello" to hello.txt
    reference_solution: echo hello > hello.txt
    success_criteria:
      - type: file_contains
        path: hello.txt
        includes: [hello]

``load_tasks([Path("tasks/examples")])`` returns one ``TaskSpec`` per task (one per dataset row
for dataset tasks). Every problem is a ``TaskError`` naming the file, line and field.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from coder_eval.criteria import Criterion
from coder_eval.dataset import DatasetSpec, dataset_rows, substitute_row
from coder_eval.errors import TaskError, did_you_mean, unknown_name
from coder_eval.sandbox import AutoSpec, SandboxSpec
from coder_eval.sandbox.base import SandboxPath, check_sandbox_path
from coder_eval.sandbox.spec import RepoSource, StarterFile, StarterFiles, TemplateDir
from coder_eval.scripted.script import ScriptRef, load_script
from coder_eval.simulation import SimulationSpec, agent_problem
from coder_eval.yaml_source import YamlDoc, explain, parse_yaml, read_text_file, read_yaml

TASK_ID = r"^[A-Za-z0-9](?:[A-Za-z0-9._-]{0,198}[A-Za-z0-9])?$"
"""Ids (task, variant, experiment): letters, digits, '.', '_', '-'; a letter or digit at both ends;
at most 200 characters. They name files, so two different ids never share one."""


def check_id(value: str) -> str:
    """Validate an id against ``TASK_ID`` with a message that says what an id may hold."""
    if not re.fullmatch(TASK_ID, value):
        raise ValueError(
            f"{value!r} is not a valid id: use letters, digits, '.', '_' and '-', start and end with a "
            "letter or digit, at most 200 characters"
        )
    return value


Identifier = Annotated[str, AfterValidator(check_id)]
"""A task, variant or experiment id (see ``TASK_ID``)."""
SuiteMetric = Literal["pass_rate", "recall", "precision", "f1", "accuracy", "macro_f1"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class RunLimits(_Strict):
    """Per-episode limits."""

    max_turns: int | None = Field(default=None, ge=1, description="Agent turns.")
    task_timeout: float = Field(default=600.0, gt=0, description="Seconds for the agent's run.")
    max_total_tokens: int | None = Field(default=None, ge=1, description="Token budget (all buckets).")
    max_usd: float | None = Field(default=None, gt=0, description="Dollar budget.")


class AgentSpec(_Strict):
    """The agent block. Fields beyond ``kind`` apply to the kinds that use them."""

    kind: str = Field(default="claude-code", description="claude-code, command, oracle, none, or a plugin.")
    model: str | None = Field(default=None, description="Model id, or 'scripted' for the scripted server.")
    permission_mode: str = Field(default="bypassPermissions", description="Claude Code permission mode.")
    allowed_tools: list[str] = Field(default_factory=list, description="Tools allowed without asking.")
    disallowed_tools: list[str] = Field(default_factory=list, description="Tools removed.")
    system_prompt: str | None = Field(default=None, description="System prompt text.")
    system_prompt_mode: Literal["append", "replace"] = Field(default="append", description="How it applies.")
    setting_sources: list[Literal["user", "project", "local"]] = Field(
        default_factory=list, description="Claude Code settings to load; [] isolates the run from the host."
    )
    plugins: list[SandboxPath] = Field(default_factory=list, description="Plugin dirs (skills/<n>/SKILL.md).")
    max_turns: int | None = Field(default=None, ge=1, description="Agent turns (min with run_limits).")
    env: dict[str, str] = Field(default_factory=dict, description="Environment for the agent process.")
    command: str | None = Field(default=None, description="command agent: template with {prompt}.")
    prompt_on_stdin: bool = Field(default=False, description="command agent: also send the prompt on stdin.")
    events: Literal["claude-stream-json", "atif", "none"] = Field(
        default="none", description="command agent: the JSONL event stream its stdout carries."
    )

    @field_validator("kind")
    @classmethod
    def _known_kind(cls, value: str) -> str:
        from coder_eval.agents import agent_kinds

        kinds = agent_kinds()
        if value not in kinds:
            raise ValueError(unknown_name("agent kind", value, kinds))
        return value


class HiddenTests(_Strict):
    """A directory that never enters the sandbox while the agent runs."""

    path: str = Field(description="Directory, relative to the task file.")
    mount_point: SandboxPath = Field(default="hidden_tests", description="Where graders get it.")


class ReferenceFile(_Strict):
    file: str = Field(description="Shell script, relative to the task file.")


class Reference(_Strict):
    """A reference solution folder: never visible to the agent; graders see it as ``$REFERENCE_DIR``."""

    directory: str = Field(description="Folder, relative to the task file.")


class TaskSpec(_Strict):
    """One task, fully resolved (dataset rows substituted, files read)."""

    task_id: Identifier = Field(description="Unique id.")
    description: str = Field(default="", description="What the task is about.")
    initial_prompt: str | None = Field(default=None, description="The prompt given to the agent.")
    initial_prompt_file: str | None = Field(default=None, description="A file holding the prompt.")
    tags: list[str] = Field(default_factory=list, description="Free tags for filtering and analysis.")
    skip: bool | str = Field(default=False, description="Skip the task (a string gives the reason).")
    agent: AgentSpec = Field(default_factory=AgentSpec, description="The agent block.")
    sandbox: SandboxSpec = Field(default_factory=lambda: AutoSpec(), description="The sandbox block.")
    run_limits: RunLimits = Field(default_factory=RunLimits, description="Limits.")
    success_criteria: list[Criterion] = Field(min_length=1, description="Graders; at least one.")
    pre_run: list[str] = Field(default_factory=list, description="Commands before the agent.")
    post_run: list[str] = Field(default_factory=list, description="Commands after the agent, before grading.")
    dataset: DatasetSpec | None = Field(default=None, description="Fan-out rows.")
    suite_thresholds: dict[str, dict[SuiteMetric, Annotated[float, Field(ge=0, le=1)]]] = Field(
        default_factory=dict,
        description="Gates over all rows of this task, by criterion id or kind: {metric: minimum}.",
    )
    reference_solution: str | ReferenceFile | None = Field(default=None, description="Oracle's script.")
    hidden_tests: HiddenTests | None = Field(default=None, description="Hidden test directory.")
    reference: Reference | None = Field(default=None, description="Reference folder for graders only.")
    scripted: ScriptRef = Field(default=None, description="Script for model 'scripted' (inline or a file).")
    simulation: SimulationSpec | None = Field(default=None, description="A simulated user (dialog task).")
    source_path: Path | None = Field(default=None, description="The task file (set by the loader).")
    dataset_row: dict[str, Any] | None = Field(default=None, description="The row (set by fan-out).")

    @field_validator("pre_run", "post_run", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value

    @model_validator(mode="after")
    def _one_prompt(self) -> TaskSpec:
        if (self.initial_prompt is None) == (self.initial_prompt_file is None):
            raise ValueError("give exactly one of 'initial_prompt' or 'initial_prompt_file'")
        ids = self.criterion_ids()  # explicit ids and the '<index>-<type>' defaults alike
        if len(ids) != len(set(ids)):
            raise ValueError(f"criterion ids must be unique, got {ids}")
        known = {*self.criterion_ids(), *(c.type for c in self.success_criteria)}
        for key in self.suite_thresholds:
            if key not in known:
                raise ValueError(
                    f"suite_thresholds: no criterion with id or kind {key!r}{did_you_mean(key, known)}; "
                    f"criteria: {', '.join(sorted(known))}"
                )
        if self.agent.kind == "claude-code" and self.sandbox.network == "none":
            raise ValueError(
                "sandbox.network: none cuts the claude-code agent off from its model (the scripted server "
                "on 127.0.0.1 too); use 'model' (only the model endpoint is reachable) or 'host'"
            )
        if self.simulation is not None and (problem := agent_problem(self.agent.kind)) is not None:
            raise ValueError(problem)
        shims = {recorder.name for recorder in self.sandbox.recorders}
        for criterion in self.success_criteria:
            wanted = getattr(criterion, "shim", None)
            if wanted is not None and wanted not in shims:
                raise ValueError(
                    f"criterion {criterion.type!r} reads shim {wanted!r}{did_you_mean(wanted, shims)}, "
                    f"but sandbox.shims and record_cli declare {sorted(shims) or 'none'}"
                )
        return self

    @property
    def source_dir(self) -> Path:
        return self.source_path.parent if self.source_path else Path.cwd()

    @property
    def prompt(self) -> str:
        """The prompt text (the loader has read ``initial_prompt_file`` into ``initial_prompt``)."""
        return self.initial_prompt or ""

    @property
    def reference_script(self) -> str | None:
        """The reference solution's text (the loader has read a file reference)."""
        return self.reference_solution if isinstance(self.reference_solution, str) else None

    def criterion_ids(self) -> list[str]:
        return [c.id or f"{i}-{c.type}" for i, c in enumerate(self.success_criteria)]


TASK_FIELDS = frozenset(TaskSpec.model_fields) - {"source_path", "dataset_row"}


def discover(paths: Iterable[Path]) -> list[Path]:
    """Task files under ``paths``: files as given, directories searched for ``*.yaml`` / ``*.yml``.

    In a directory search, YAML files with none of the task fields (scripts, fixtures) are not tasks,
    and folders named ``fixtures`` or starting with ``_`` or ``.`` are not searched.
    """
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            for candidate in sorted(path.rglob("*.y*ml")):
                parts = candidate.relative_to(path).parts[:-1]
                if any(p == "fixtures" or p.startswith(("_", ".")) for p in parts):
                    continue
                if candidate.suffix in {".yaml", ".yml"} and _looks_like_task(candidate):
                    found.append(candidate)
        elif path.is_file():
            found.append(path)
        else:
            raise TaskError(f"{path}: no such file or directory; pass task files or folders of them")
    if not found:
        raise TaskError(f"no task files found in {', '.join(map(str, paths))}")
    return found


def _looks_like_task(path: Path) -> bool:
    try:
        data = parse_yaml(read_text_file(path, kind=TaskError)).data
    except Exception:  # the loader reports every problem properly, with the file and line
        return True
    return isinstance(data, dict) and bool(TASK_FIELDS & set(data))


def load_tasks(paths: Iterable[Path], overrides: Mapping[str, Any] | None = None) -> list[TaskSpec]:
    """Load, validate and fan out every task under ``paths``; ``overrides`` deep-merge over each task."""
    tasks: list[TaskSpec] = []
    errors: list[str] = []
    for path in discover(paths):
        try:
            tasks.extend(build_tasks(read_yaml(path, kind=TaskError), overrides or {}))
        except TaskError as exc:
            errors.append(str(exc))
    seen: dict[str, Path | None] = {}
    for task in tasks:
        if task.task_id in seen:
            errors.append(
                f"{task.source_path}: task_id {task.task_id!r} is also used by {seen[task.task_id]}"
            )
        seen[task.task_id] = task.source_path
    if errors:
        raise TaskError("\n".join(errors))
    return tasks


def deep_merge(base: Mapping[str, Any], top: Mapping[str, Any]) -> dict[str, Any]:
    """``top`` over ``base``, recursing into mappings; lists and scalars in ``top`` replace."""
    merged = dict(base)
    for key, value in top.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def build_tasks(doc: YamlDoc, overrides: Mapping[str, Any]) -> list[TaskSpec]:
    """One task file (with ``overrides`` merged over it) -> validated tasks, one per dataset row."""
    data = deep_merge(doc.data, overrides)
    rows = dataset_rows(doc, data.get("dataset"))
    if rows is None:
        return [_validate(doc, data, None)]
    return [_validate(doc, substitute_row(doc, data, row), row) for row in rows]


def _validate(doc: YamlDoc, data: dict[str, Any], row: dict[str, Any] | None) -> TaskSpec:
    try:
        task = TaskSpec.model_validate({**data, "source_path": doc.path.resolve(), "dataset_row": row})
    except ValidationError as exc:
        raise TaskError(explain(exc, doc, TaskSpec)) from exc
    return _resolve_sources(doc, task)


def _resolve_sources(doc: YamlDoc, task: TaskSpec) -> TaskSpec:
    """Read prompt and reference files; make source paths absolute; check that each exists."""
    base = doc.path.resolve().parent
    problems: list[str] = []

    def existing(relative: str, loc: tuple[str | int, ...], want_dir: bool) -> str:
        target = (base / relative).resolve()
        ok = target.is_dir() if want_dir else target.is_file()
        if not ok:
            kind = "directory" if want_dir else "file"
            problems.append(
                f"{doc.where(loc)}: {'.'.join(map(str, loc))}: {kind} {relative!r} not found "
                f"(looked for {target}); paths are relative to the task file"
            )
        return str(target)

    update: dict[str, Any] = {}
    if task.initial_prompt_file is not None:
        prompt_path = Path(existing(task.initial_prompt_file, ("initial_prompt_file",), want_dir=False))
        if prompt_path.is_file():
            update["initial_prompt"] = prompt_path.read_text(encoding="utf-8")
    if isinstance(task.reference_solution, ReferenceFile):
        script = Path(existing(task.reference_solution.file, ("reference_solution", "file"), want_dir=False))
        update["reference_solution"] = script.read_text(encoding="utf-8") if script.is_file() else None
    if task.hidden_tests is not None:
        hidden = existing(task.hidden_tests.path, ("hidden_tests", "path"), want_dir=True)
        update["hidden_tests"] = task.hidden_tests.model_copy(update={"path": hidden})
    sources = [
        _resolve_source(source, ("sandbox", "template_sources", i), base, existing)
        for i, source in enumerate(task.sandbox.template_sources)
    ]
    sandbox = task.sandbox.model_copy(update={"template_sources": sources})
    update["sandbox"] = sandbox.with_task_paths(existing)
    if task.reference is not None:
        folder = existing(task.reference.directory, ("reference", "directory"), want_dir=True)
        update["reference"] = task.reference.model_copy(update={"directory": folder})
    if isinstance(task.scripted, str):
        update["scripted"] = existing(task.scripted, ("scripted",), want_dir=False)
        if Path(update["scripted"]).is_file():
            try:
                load_script(update["scripted"])
            except TaskError as exc:
                problems.append(f"{doc.where(('scripted',))}: scripted: {exc}")
    if task.simulation is not None and isinstance(task.simulation.scripted, str):
        user_script = existing(task.simulation.scripted, ("simulation", "scripted"), want_dir=False)
        update["simulation"] = task.simulation.model_copy(update={"scripted": user_script})
    if problems:
        raise TaskError("\n".join(problems))
    return task.model_copy(update=update)


def _resolve_source(source: Any, loc: tuple[str | int, ...], base: Path, existing: Any) -> Any:
    """A template source with its task-relative paths made absolute (and checked)."""
    if isinstance(source, TemplateDir):
        path = existing(source.path, (*loc, "path"), True)
        files = [_resolve_starter(f, (*loc, "files", j), existing) for j, f in enumerate(source.files)]
        return source.model_copy(update={"path": path, "files": files})
    if isinstance(source, StarterFiles):
        files = [_resolve_starter(f, (*loc, "files", j), existing) for j, f in enumerate(source.files)]
        return source.model_copy(update={"files": files})
    if isinstance(source, RepoSource) and "://" not in source.url and not source.url.startswith("git@"):
        return source.model_copy(update={"url": existing(source.url, (*loc, "url"), True)})
    return source


def _resolve_starter(starter: Any, loc: tuple[str | int, ...], existing: Any) -> Any:
    if isinstance(starter, StarterFile) and starter.source is not None:
        return starter.model_copy(update={"source": existing(starter.source, (*loc, "source"), False)})
    return starter


__all__ = [
    "AgentSpec",
    "HiddenTests",
    "Reference",
    "RunLimits",
    "SandboxSpec",
    "TaskSpec",
    "build_tasks",
    "check_sandbox_path",
    "deep_merge",
    "discover",
    "load_tasks",
]
