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
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    SerializationInfo,
    ValidationError,
    field_serializer,
    field_validator,
    model_validator,
)

from coder_eval.agents import MODEL_AGENTS as MODEL_AGENT_KINDS
from coder_eval.agents import (
    AgentSpec,
    PluginAgentSpec,
    kinds_with_field,
    override_agent,
    resolve_plugin_spec,
)
from coder_eval.agents.claude_code.spec import ClaudeCodeSpec
from coder_eval.agents.skill_sources import with_resolved_plugins
from coder_eval.agents.spec import AgentSpecBase, read_prompt_file
from coder_eval.criteria import Criterion
from coder_eval.criteria.json_check import JsonCheck
from coder_eval.criteria.suite_metrics import SuiteMetric, Threshold
from coder_eval.dataset import DatasetSpec, dataset_rows, substitute_row
from coder_eval.errors import AgentError, TaskError, did_you_mean
from coder_eval.file_kinds import not_readable
from coder_eval.limits import RunLimits
from coder_eval.plugins import check_plugins
from coder_eval.sandbox import AutoSpec, SandboxSpec
from coder_eval.sandbox.base import SandboxPath, check_sandbox_path
from coder_eval.sandbox.spec import RepoSource, StarterFile, StarterFiles, TemplateDir
from coder_eval.scripted.script import ScriptRef, load_script
from coder_eval.simulation import DIALOG_AGENTS, GRADER_CHECK_AGENTS, SimulationSpec, agent_problem
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


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Command(_Strict):
    """A ``pre_run`` / ``post_run`` step: ``{command, timeout, fail_on_error}`` (a plain string is the same
    with the defaults)."""

    command: str = Field(min_length=1, description="Shell command, run from the workspace.")
    timeout: float = Field(default=30.0, ge=1, le=300, description="Seconds before it is killed.")
    fail_on_error: bool = Field(
        default=True, description="pre_run: a failure is a harness error; post_run: never fails anything."
    )


class Retry(_Strict):
    """Re-run an episode whose provider failed in a way a retry can fix (rate limit, overload, 5xx)."""

    max_retries: int = Field(default=0, ge=0, le=10, description="Extra attempts.")
    initial_delay: float = Field(default=2.0, ge=0, description="Seconds before the first retry.")
    backoff_multiplier: float = Field(default=2.0, ge=1, description="Each delay is this many times more.")


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
    agent: AgentSpec = Field(default_factory=ClaudeCodeSpec, description="The agent block (on `type`).")
    sandbox: SandboxSpec = Field(default_factory=lambda: AutoSpec(), description="The sandbox block.")
    run_limits: RunLimits = Field(default_factory=RunLimits, description="Limits.")
    success_criteria: list[Criterion] = Field(min_length=1, description="Graders; at least one.")
    pre_run: list[Command] = Field(default_factory=list, description="Commands before the agent.")
    post_run: list[Command] = Field(
        default_factory=list, description="Commands in the verifier before grading (informational)."
    )
    max_iterations: int = Field(
        default=1, ge=1, le=20, description="Attempts: after a failed grading the failures are the next turn."
    )
    retry: Retry = Field(default_factory=Retry, description="Retries of provider failures.")
    dataset: DatasetSpec | None = Field(default=None, description="Fan-out rows.")
    suite_thresholds: dict[str, dict[SuiteMetric, Threshold]] = Field(
        default_factory=dict,
        description="Gates over all rows of this task, by criterion id or kind: {metric: minimum}.",
    )
    expected_commands: int | None = Field(
        default=None, ge=1, description="Tool calls a good solution needs (commands_efficiency's default)."
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
        value = [value] if isinstance(value, str | dict) else value
        if isinstance(value, list):
            return [{"command": item} if isinstance(item, str) else item for item in value]
        return value

    @field_validator("agent")
    @classmethod
    def _plugin_agent(cls, value: Any) -> Any:
        return resolve_plugin_spec(value) if isinstance(value, PluginAgentSpec) else value

    @field_serializer("agent")
    def _agent_as_its_own(self, agent: AgentSpecBase, info: SerializationInfo) -> dict[str, Any]:
        """The agent block as its own spec dumps it (a plugin's spec is not a member of the union)."""
        return agent.model_dump(
            mode=info.mode,
            by_alias=bool(info.by_alias),
            exclude_none=info.exclude_none,
            exclude_defaults=info.exclude_defaults,
            exclude_unset=info.exclude_unset,
        )

    @model_validator(mode="before")
    @classmethod
    def _older_spellings(cls, data: Any) -> Any:
        """``task_timeout`` at the top level, ``agent.turn_timeout``, and ``stop_when`` (armed only by
        ``run_limits.stop_early: true``, as in the original format), as older files write them."""
        if not isinstance(data, dict):
            return data
        data = dict(data)
        limits = dict(data.get("run_limits") or {})
        if "task_timeout" in data:
            limits.setdefault("task_timeout", data.pop("task_timeout"))
        agent = data.get("agent")
        if isinstance(agent, dict) and agent.get("turn_timeout") is not None:
            limits.setdefault("turn_timeout", agent["turn_timeout"])
        if limits:
            data["run_limits"] = limits
        if limits.get("stop_early") is not True and isinstance(data.get("success_criteria"), list):
            data["success_criteria"] = [_inert_stop_when(c) for c in data["success_criteria"]]
        simulation = data.get("simulation")
        if isinstance(simulation, dict) and simulation.get("enabled") is False:
            data["simulation"] = None  # a disabled block, as the original format writes it
        return data

    @model_validator(mode="after")
    def _one_prompt(self) -> TaskSpec:
        no_prompt = self.agent.type == "none" or self.simulation is not None
        if self.initial_prompt is not None and self.initial_prompt_file is not None:
            raise ValueError("give exactly one of 'initial_prompt' or 'initial_prompt_file', not both")
        if self.initial_prompt is None and self.initial_prompt_file is None and not no_prompt:
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
        if self.agent.type in MODEL_AGENT_KINDS and self.sandbox.network == "none":
            raise ValueError(
                f"sandbox.network: none cuts the {self.agent.type} agent off from its model (the scripted "
                "server on 127.0.0.1 too); use 'model' (only the model endpoint is reachable) or 'host'"
            )
        if self.simulation is not None and (problem := agent_problem(self.agent.kind)) is not None:
            raise ValueError(problem)
        if self.max_iterations > 1 and self.agent.kind not in (*DIALOG_AGENTS, *GRADER_CHECK_AGENTS):
            raise ValueError(
                f"max_iterations needs an agent that keeps its session across turns (the graders' "
                f"failures become its next turn); {self.agent.kind!r} does not. Kinds that do: "
                f"{', '.join(DIALOG_AGENTS)} (oracle and none run one iteration); or set max_iterations: 1"
            )
        if self.max_iterations > 1 and self.simulation is not None:
            raise ValueError("max_iterations and simulation both write the next user turn; use one of them")
        self._check_stop_early()
        shims = {recorder.name for recorder in self.sandbox.recorders}
        for criterion in self.success_criteria:
            wanted = getattr(criterion, "shim", None)
            if wanted is not None and wanted not in shims:
                raise ValueError(
                    f"criterion {criterion.type!r} reads shim {wanted!r}{did_you_mean(wanted, shims)}, "
                    f"but sandbox.shims and record_cli declare {sorted(shims) or 'none'}"
                )
        return self

    def _check_stop_early(self) -> None:
        """``stop_early`` stops an agent at a tool-call boundary: refused where no boundary is seen
        while the agent runs, or where a stop would cut a conversation short. (The oracle and ``none``
        are not stopped: they check the graders, and make no model calls to save.)"""
        armed = [c.type for c in self.success_criteria if getattr(c, "stop_early", None)]
        if not armed or not self.run_limits.stop_early:
            return
        if self.agent.kind == "command":
            raise ValueError(
                f"stop_early on {armed}: a command agent's events are read after it exits, so it "
                "cannot be stopped at a tool call; set run_limits.stop_early: false"
            )
        if self.agent.kind in GRADER_CHECK_AGENTS:
            return
        if self.max_iterations > 1 or self.simulation is not None:
            other = "max_iterations" if self.max_iterations > 1 else "simulation"
            raise ValueError(
                f"stop_early on {armed} cannot be combined with {other}: an early stop would end the "
                "episode the next turn belongs to"
            )

    @model_validator(mode="before")
    @classmethod
    def _task_expected_commands(cls, data: Any) -> Any:
        """A task's ``expected_commands`` is the budget of each ``commands_efficiency`` giving none."""
        if not isinstance(data, dict) or data.get("expected_commands") is None:
            return data
        criteria = data.get("success_criteria")
        if not isinstance(criteria, list):
            return data
        budget = {"expected_commands": data["expected_commands"]}
        filled = [
            {**c, **budget}
            if isinstance(c, dict)
            and c.get("type") == "commands_efficiency"
            and not {"expected", "expected_commands"} & set(c)
            else c
            for c in criteria
        ]
        return {**data, "success_criteria": filled}

    @model_validator(mode="after")
    def _criteria_fit_task(self) -> TaskSpec:
        recorders = {r.name: r.log for r in self.sandbox.recorders}
        for i, criterion in enumerate(self.success_criteria):
            if criterion.type == "commands_efficiency" and getattr(criterion, "expected", None) is None:
                raise ValueError(
                    f"success_criteria[{i}]: commands_efficiency needs 'expected' (or 'expected_commands'), "
                    "or the task's top-level expected_commands"
                )
            names = getattr(criterion, "recorder_names", None)
            if names is not None and not names(recorders):
                wanted = criterion.tool or f"logging to {criterion.log!r}"  # type: ignore[attr-defined]
                raise ValueError(
                    f"success_criteria[{i}]: cli_called reads the recorded CLI {wanted}, but "
                    f"sandbox.record_cli and shims declare {sorted(recorders) or 'none'}"
                )
        return self

    @property
    def suite_gates(self) -> dict[str, dict[str, float]]:
        """Every suite threshold: the task's ``suite_thresholds`` and each criterion's own (by its id)."""
        gates = {key: dict(metrics) for key, metrics in self.suite_thresholds.items()}
        for criterion_id, criterion in zip(self.criterion_ids(), self.success_criteria, strict=True):
            if criterion.suite_thresholds:
                gates[criterion_id] = {**gates.get(criterion_id, {}), **criterion.suite_thresholds}
        return gates

    @property
    def trials(self) -> int:
        """Episodes per repeat: a dialog task's ``simulation.n_trials``, else 1."""
        return self.simulation.n_trials if self.simulation is not None else 1

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


def _inert_stop_when(criterion: Any) -> Any:
    """A criterion without its ``stop_when``: the original format arms it only when the task sets
    ``run_limits.stop_early: true`` (``criteria/early_stop.py``)."""
    if isinstance(criterion, dict) and "stop_when" in criterion:
        return {k: v for k, v in criterion.items() if k != "stop_when"}
    return criterion


TASK_FIELDS = frozenset(TaskSpec.model_fields) - {"source_path", "dataset_row"}


HARBOR_CONFIG = "task.toml"
"""A folder holding this file is a Harbor task directory (``coder_eval.interop.harbor``)."""


def discover(paths: Iterable[Path], notes: list[str] | None = None) -> list[Path]:
    """Task files under ``paths``: files as given, directories searched for ``*.yaml`` / ``*.yml``,
    and Harbor task directories (a folder holding ``task.toml``), given or found; each file once,
    however often or by whatever path it is given.

    In a directory search, YAML files with none of the task fields (scripts, fixtures) are not tasks,
    and folders named ``fixtures`` or starting with ``_`` or ``.`` are not searched; a FIFO, socket,
    device or symlink loop named like a task file is skipped unopened, with a line in ``notes``. A path
    given by name that is one of those is refused, saying which.
    """
    found: dict[Path, Path] = {}
    for path in paths:
        if path.is_dir() and (path / HARBOR_CONFIG).is_file():
            found.setdefault(path.resolve(), path)
        elif path.is_dir():
            for candidate in _search(path, notes if notes is not None else []):
                found.setdefault(candidate.resolve(), candidate)
        elif path.is_file() and (problem := not_readable(path)) is None:
            found.setdefault(path.resolve(), path)
        else:
            problem = not_readable(path)
            problem = "no such file or directory" if problem in (None, "not found") else problem
            raise TaskError(f"{path}: {problem}; pass task files or folders of them")
    if not found:
        raise TaskError(f"no task files found in {', '.join(map(str, paths))}")
    return list(found.values())


def _search(folder: Path, notes: list[str]) -> list[Path]:
    """The task files and Harbor task directories in ``folder`` (see :func:`discover`)."""
    harbor = [c.parent for c in sorted(folder.rglob(HARBOR_CONFIG)) if _searched(c, folder)]
    found = list(harbor)
    for candidate in sorted(folder.rglob("*.y*ml")):
        if not _searched(candidate, folder) or any(candidate.is_relative_to(h) for h in harbor):
            continue
        if candidate.suffix not in {".yaml", ".yml"}:
            continue
        problem = not_readable(candidate)
        if problem is not None:
            notes.append(f"{candidate}: {problem}; skipped, not read as a task")
        elif _looks_like_task(candidate):
            found.append(candidate)
    return found


def _searched(candidate: Path, root: Path) -> bool:
    parts = candidate.relative_to(root).parts[:-1]
    return not any(p == "fixtures" or p.startswith(("_", ".")) for p in parts)


def _looks_like_task(path: Path) -> bool:
    try:
        data = parse_yaml(read_text_file(path, kind=TaskError)).data
    except Exception:  # the loader reports every problem properly, with the file and line
        return True
    return isinstance(data, dict) and bool(TASK_FIELDS & set(data))


def load_tasks(paths: Iterable[Path], overrides: Mapping[str, Any] | None = None) -> list[TaskSpec]:
    """Load, validate and fan out every task under ``paths``; ``overrides`` deep-merge over each task.

    A broken or shadowing plugin is a ``PluginError`` first (``coder_eval.plugins``)."""
    check_plugins()
    tasks: list[TaskSpec] = []
    errors: list[str] = []
    for path in discover(paths):
        try:
            tasks.extend(build_tasks(task_doc(path), overrides or {}))
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


def task_doc(path: Path) -> YamlDoc:
    """A task source as a document: a task file, or a Harbor task directory or its ``task.toml``
    (``coder_eval.interop.harbor``)."""
    if path.is_dir() or path.name == HARBOR_CONFIG:
        from coder_eval.interop.harbor import harbor_doc  # it builds on this module

        return harbor_doc(path if path.is_dir() else path.parent)
    return read_yaml(path, kind=TaskError)


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
    data = deep_merge(doc.data, {k: v for k, v in overrides.items() if k != "agent"})
    if isinstance(overrides.get("agent"), Mapping):
        data["agent"] = override_agent(dict(doc.data.get("agent") or {}), dict(overrides["agent"]))
    rows = dataset_rows(doc, data.get("dataset"))
    if rows is None:
        return [_validate(doc, data, None)]
    return [_validate(doc, substitute_row(doc, data, row), row) for row in rows]


def _validate(doc: YamlDoc, data: dict[str, Any], row: dict[str, Any] | None) -> TaskSpec:
    try:
        task = TaskSpec.model_validate({**data, "source_path": doc.path.resolve(), "dataset_row": row})
    except ValidationError as exc:
        raise TaskError(_with_kind_hints(explain(exc, doc, TaskSpec), exc)) from exc
    return _resolve_sources(doc, task)


def _with_kind_hints(message: str, exc: ValidationError) -> str:
    """Say which agent kinds have a field written on a kind that does not: ``allowed_tools`` on an
    ``oracle`` block is a field of the CLI agents, not of the oracle."""
    hints = []
    for error in exc.errors():
        loc = error["loc"]
        if error["type"] == "extra_forbidden" and len(loc) == 3 and loc[0] == "agent":
            owners = kinds_with_field(str(loc[2]))
            if owners:
                hints.append(
                    f"agent.{loc[2]} is a field of the {', '.join(owners)} agent(s), not of {loc[1]!r}"
                )
    return "\n".join([message, *hints])


def _resolve_sources(doc: YamlDoc, task: TaskSpec) -> TaskSpec:
    """Read prompt and reference files; make source paths absolute; check that each exists."""
    base = doc.path.resolve().parent
    problems: list[str] = []

    def existing(relative: str, loc: tuple[str | int, ...], want_dir: bool) -> str:
        target = _resolved(base / relative)
        problem = not_readable(target, want_dir=want_dir)
        if problem is not None:
            kind = "directory" if want_dir else "file"
            problems.append(
                f"{doc.where(loc)}: {'.'.join(map(str, loc))}: {kind} {relative!r} "
                f"{'not found' if problem in ('not found', 'not a directory') else 'is ' + problem} "
                f"(looked for {target}); paths are relative to the task file"
            )
        return str(target)

    update: dict[str, Any] = {"agent": _resolve_agent_files(task, base, problems, doc)}
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
    update["agent"], plugin_problems = with_resolved_plugins(
        update["agent"], base, sources, bool(task.pre_run)
    )
    problems += [
        f"{doc.where(('agent', 'plugins', i))}: agent.plugins[{i}]: {why}" for i, why in plugin_problems
    ]
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
    update["success_criteria"] = [
        _resolve_schema(c, i, base, sources, doc, problems) for i, c in enumerate(task.success_criteria)
    ]
    if task.simulation is not None and isinstance(task.simulation.scripted, str):
        user_script = existing(task.simulation.scripted, ("simulation", "scripted"), want_dir=False)
        update["simulation"] = task.simulation.model_copy(update={"scripted": user_script})
    if problems:
        raise TaskError("\n".join(problems))
    return task.model_copy(update=update)


def _resolved(path: Path) -> Path:
    """``path`` made absolute with its links followed; one in a symlink loop as it is (absolute)."""
    try:
        return path.resolve()
    except (RuntimeError, OSError):  # a symlink loop (RuntimeError up to Python 3.12)
        return path.absolute()


def _resolve_agent_files(task: TaskSpec, base: Path, problems: list[str], doc: YamlDoc) -> Any:
    """The agent block with ``system_prompt_file`` read into ``system_prompt`` and a
    ``claude_settings`` file read into a mapping (both relative to the task file)."""
    agent: Any = task.agent
    try:
        agent = read_prompt_file(agent, base)
    except AgentError as exc:
        problems.append(f"{doc.where(('agent', 'system_prompt_file'))}: {exc}")
    settings = getattr(agent, "claude_settings", None)
    if isinstance(settings, str):
        path = (base / settings).resolve()
        try:
            loaded = json.loads(path.read_text(encoding="utf-8"))
            if not isinstance(loaded, dict):
                raise ValueError("not a JSON object")
            agent = agent.model_copy(update={"claude_settings": loaded})
        except (OSError, ValueError) as exc:
            problems.append(
                f"{doc.where(('agent', 'claude_settings'))}: agent.claude_settings: cannot read {path}: {exc}"
            )
    return agent


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


def _resolve_schema(
    criterion: Any, index: int, base: Path, sources: list[Any], doc: YamlDoc, problems: list[str]
) -> Any:
    """A ``json_check`` whose ``json_schema`` is a file: its pristine copy found and checked."""
    if not isinstance(criterion, JsonCheck):
        return criterion
    try:
        return criterion.resolved(base, sources)
    except ValueError as exc:
        where = doc.where(("success_criteria", index, "json_schema"))
        problems.append(f"{where}: success_criteria[{index}].json_schema: {exc}")
        return criterion


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
    "task_doc",
]
