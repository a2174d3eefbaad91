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

import json
import random
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from coder_eval.criteria import Criterion
from coder_eval.errors import TaskError, did_you_mean, unknown_name
from coder_eval.sandbox.base import SandboxPath, check_sandbox_path
from coder_eval.simulation import SimulationSpec, agent_problem
from coder_eval.yaml_source import YamlDoc, explain, read_yaml

TASK_ID = r"^[A-Za-z0-9][A-Za-z0-9._-]*$"
ROW_REF = re.compile(r"\$\{row\.([A-Za-z0-9_]+)\}")
SAMPLE_SEED = 0
"""Seed of every task sample (``--sample``, ``sample_per_stratum``): the same N gives the same tasks."""
SuiteMetric = Literal["pass_rate", "recall", "precision", "f1", "accuracy", "macro_f1"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class StarterFile(_Strict):
    """A file written into the sandbox: inline ``content``, or ``source`` (relative to the task file)."""

    path: SandboxPath = Field(description="Where the file goes, relative to the sandbox root.")
    content: str | None = Field(default=None, description="Inline content.")
    source: str | None = Field(default=None, description="A file to copy, relative to the task file.")
    executable: bool = Field(default=False, description="chmod +x after writing.")

    @model_validator(mode="after")
    def _one_origin(self) -> StarterFile:
        if (self.content is None) == (self.source is None):
            raise ValueError("give exactly one of 'content' or 'source'")
        return self


class TemplateSource(_Strict):
    """Files that seed the sandbox before the agent runs."""

    template_dir: str | None = Field(default=None, description="Directory copied in (relative to the task).")
    target: SandboxPath = Field(default=".", description="Where in the sandbox to copy it.")
    starter_files: list[StarterFile | SandboxPath] = Field(
        default_factory=list,
        description="Inline files, or paths inside template_dir to copy (then only those are copied).",
    )


class Shim(_Strict):
    """A command on PATH that logs every call (argv, cwd, exit code) as JSONL, then runs ``target``."""

    name: str = Field(pattern=r"^[A-Za-z0-9._-]+$", description="Command name the agent calls.")
    target: SandboxPath = Field(description="The real program, relative to the sandbox root.")
    log: SandboxPath | None = Field(
        default=None, description="Log path (default .coder_eval/calls/<name>.jsonl)."
    )

    @property
    def log_path(self) -> str:
        return self.log or f".coder_eval/calls/{self.name}.jsonl"


class SandboxSpec(_Strict):
    """Where the episode runs."""

    driver: Literal["tempdir", "bwrap", "docker"] = Field(default="tempdir", description="Sandbox driver.")
    template_sources: list[TemplateSource] = Field(default_factory=list, description="Seed files.")
    mock_path_dirs: list[SandboxPath] = Field(
        default_factory=list, description="Sandbox dirs made executable and put first on PATH."
    )
    shims: list[Shim] = Field(default_factory=list, description="Recording shims for fake CLIs.")
    env: dict[str, str] = Field(default_factory=dict, description="Extra environment variables.")
    network: bool = Field(default=True, description="Allow network access (bwrap, docker).")
    image: str | None = Field(default=None, description="Docker image (docker driver).")


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


class DatasetSpec(_Strict):
    """Rows that fan one task out into many; ``${row.<field>}`` is substituted in prompt and criteria."""

    rows: list[dict[str, Any]] | None = Field(default=None, description="Inline rows.")
    paths: list[str] = Field(default_factory=list, description="JSONL files, relative to the task file.")
    id_field: str = Field(default="id", description="Row field used in the task id.")
    split: str | None = Field(default=None, description="Keep only rows whose split_field equals this.")
    split_field: str = Field(default="split", description="Row field holding the split name.")
    sample_per_stratum: int | None = Field(
        default=None, ge=1, description="Keep this many rows per value of stratify_field (seed SAMPLE_SEED)."
    )
    stratify_field: str | None = Field(default=None, description="Row field whose values are the strata.")

    @model_validator(mode="after")
    def _stratum_pair(self) -> DatasetSpec:
        if (self.sample_per_stratum is None) != (self.stratify_field is None):
            raise ValueError("give both 'sample_per_stratum' and 'stratify_field', or neither")
        return self


class ReferenceFile(_Strict):
    file: str = Field(description="Shell script, relative to the task file.")


class TaskSpec(_Strict):
    """One task, fully resolved (dataset rows substituted, files read)."""

    task_id: Annotated[str, Field(pattern=TASK_ID)] = Field(description="Unique id.")
    description: str = Field(default="", description="What the task is about.")
    initial_prompt: str | None = Field(default=None, description="The prompt given to the agent.")
    initial_prompt_file: str | None = Field(default=None, description="A file holding the prompt.")
    tags: list[str] = Field(default_factory=list, description="Free tags for filtering and analysis.")
    skip: bool | str = Field(default=False, description="Skip the task (a string gives the reason).")
    agent: AgentSpec = Field(default_factory=AgentSpec, description="The agent block.")
    sandbox: SandboxSpec = Field(default_factory=SandboxSpec, description="The sandbox block.")
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
    scripted: dict[str, Any] | str | None = Field(default=None, description="Script for model 'scripted'.")
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
        ids = [c.id for c in self.success_criteria if c.id]
        if len(ids) != len(set(ids)):
            raise ValueError(f"criterion ids must be unique, got {ids}")
        known = {*self.criterion_ids(), *(c.type for c in self.success_criteria)}
        for key in self.suite_thresholds:
            if key not in known:
                raise ValueError(
                    f"suite_thresholds: no criterion with id or kind {key!r}{did_you_mean(key, known)}; "
                    f"criteria: {', '.join(sorted(known))}"
                )
        if self.agent.kind == "claude-code" and not self.sandbox.network and self.sandbox.driver != "tempdir":
            raise ValueError(
                "sandbox.network: false cuts the claude-code agent off from its model (the scripted server "
                "on 127.0.0.1 too, which is outside the sandbox's network namespace); set network: true"
            )
        if self.simulation is not None and (problem := agent_problem(self.agent.kind)) is not None:
            raise ValueError(problem)
        shims = {shim.name for shim in self.sandbox.shims}
        for criterion in self.success_criteria:
            wanted = getattr(criterion, "shim", None)
            if wanted is not None and wanted not in shims:
                raise ValueError(
                    f"criterion {criterion.type!r} reads shim {wanted!r}{did_you_mean(wanted, shims)}, "
                    f"but sandbox.shims declares {sorted(shims) or 'none'}"
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
    import yaml

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return True  # let the loader report it properly
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
    rows = _dataset_rows(doc, data.get("dataset"))
    if rows is None:
        return [_validate(doc, data, None)]
    return [_validate(doc, _substitute_row(doc, data, row), row) for row in rows]


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
    sources = []
    for i, source in enumerate(task.sandbox.template_sources):
        changes: dict[str, Any] = {}
        if source.template_dir is not None:
            dir_loc = ("sandbox", "template_sources", i, "template_dir")
            changes["template_dir"] = existing(source.template_dir, dir_loc, want_dir=True)
        files = []
        for j, starter in enumerate(source.starter_files):
            if isinstance(starter, StarterFile) and starter.source is not None:
                loc = ("sandbox", "template_sources", i, "starter_files", j, "source")
                starter = starter.model_copy(update={"source": existing(starter.source, loc, want_dir=False)})
            files.append(starter)
        sources.append(source.model_copy(update={**changes, "starter_files": files}))
    update["sandbox"] = task.sandbox.model_copy(update={"template_sources": sources})
    if isinstance(task.scripted, str):
        update["scripted"] = existing(task.scripted, ("scripted",), want_dir=False)
    if task.simulation is not None and isinstance(task.simulation.scripted, str):
        user_script = existing(task.simulation.scripted, ("simulation", "scripted"), want_dir=False)
        update["simulation"] = task.simulation.model_copy(update={"scripted": user_script})
    if problems:
        raise TaskError("\n".join(problems))
    return task.model_copy(update=update)


def _dataset_rows(doc: YamlDoc, spec: Any) -> list[dict[str, Any]] | None:
    if spec is None:
        return None
    try:
        dataset = DatasetSpec.model_validate(spec)
    except ValidationError as exc:
        raise TaskError(explain(exc, doc, DatasetSpec, prefix=("dataset",))) from exc
    rows = list(dataset.rows or [])
    for i, relative in enumerate(dataset.paths):
        rows.extend(_read_jsonl(doc, relative, ("dataset", "paths", i)))
    if not rows:
        raise TaskError(f"{doc.where(('dataset',))}: dataset: no rows; add 'rows' or 'paths' with JSONL rows")
    for i, row in enumerate(rows):
        if dataset.id_field not in row:
            raise TaskError(
                f"{doc.where(('dataset',))}: dataset row {i} has no {dataset.id_field!r} "
                f"(id_field); its fields: {', '.join(row)}"
            )
    ids = [str(r[dataset.id_field]) for r in rows]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise TaskError(f"{doc.where(('dataset',))}: dataset: duplicate row ids {duplicates}")
    return _select_rows(doc, dataset, [{**row, "__id__": str(row[dataset.id_field])} for row in rows])


def _select_rows(doc: YamlDoc, dataset: DatasetSpec, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows of ``dataset.split``, then ``sample_per_stratum`` rows per stratum (seed SAMPLE_SEED)."""
    where = doc.where(("dataset",))
    if dataset.split is not None:
        splits = sorted({str(r[dataset.split_field]) for r in rows if dataset.split_field in r})
        rows = [r for r in rows if str(r.get(dataset.split_field)) == dataset.split]
        if not rows:
            raise TaskError(
                f"{where}: dataset.split: no row has {dataset.split_field}={dataset.split!r}"
                f"{did_you_mean(dataset.split, splits)}; splits present: {', '.join(splits) or 'none'}"
            )
    if dataset.stratify_field is None or dataset.sample_per_stratum is None:
        return rows
    strata: dict[str, list[str]] = {}
    for row in rows:
        if dataset.stratify_field not in row:
            raise TaskError(f"{where}: dataset row {row['__id__']!r} has no {dataset.stratify_field!r}")
        strata.setdefault(str(row[dataset.stratify_field]), []).append(row["__id__"])
    keep: set[str] = set()
    for value in sorted(strata):
        ids = strata[value]
        keep.update(random.Random(SAMPLE_SEED).sample(ids, min(dataset.sample_per_stratum, len(ids))))
    return [r for r in rows if r["__id__"] in keep]


def _read_jsonl(doc: YamlDoc, relative: str, loc: tuple[str | int, ...]) -> list[dict[str, Any]]:
    path = doc.path.resolve().parent / relative
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise TaskError(f"{doc.where(loc)}: dataset file {relative!r} not found ({path})") from exc
    rows = []
    for number, line in enumerate(lines, start=1):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise TaskError(f"{path}:{number}: invalid JSON in dataset: {exc.msg}") from exc
    return rows


def _substitute_row(doc: YamlDoc, data: dict[str, Any], row: dict[str, Any]) -> dict[str, Any]:
    """Fan-out: a per-row task id, and ``${row.x}`` replaced in the prompt and every criterion string."""
    row_id = row.pop("__id__")
    missing: set[str] = set()

    def fill(value: Any) -> Any:
        if isinstance(value, str):
            for name in ROW_REF.findall(value):
                if name not in row:
                    missing.add(name)
            return ROW_REF.sub(lambda m: str(row.get(m.group(1), m.group(0))), value)
        if isinstance(value, list):
            return [fill(v) for v in value]
        if isinstance(value, dict):
            return {k: fill(v) for k, v in value.items()}
        return value

    out = {k: v for k, v in data.items() if k != "dataset"}
    out["task_id"] = f"{data.get('task_id', 'task')}.{row_id}"
    for key in ("initial_prompt", "success_criteria", "description"):
        if key in out:
            out[key] = fill(out[key])
    if missing:
        raise TaskError(
            f"{doc.where(('dataset',))}: the task references ${{row.{sorted(missing)[0]}}} but row "
            f"{row_id!r} has no such field; its fields: {', '.join(k for k in row)}"
        )
    return out


__all__ = [
    "AgentSpec",
    "HiddenTests",
    "RunLimits",
    "SandboxSpec",
    "TaskSpec",
    "build_tasks",
    "check_sandbox_path",
    "deep_merge",
    "discover",
    "load_tasks",
]
