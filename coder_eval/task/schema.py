"""The task schema: ``TaskSpec`` and its blocks, what a suite author writes, validated once.

Each agent and criterion says what it requires of the task it is in (its capabilities, its
``task_problem`` hook); the schema asks them, and names no kind.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    SerializationInfo,
    field_serializer,
    field_validator,
    model_validator,
)

from coder_eval.agents import AgentSpec, PluginAgentSpec, kinds_that, resolve_plugin_spec
from coder_eval.agents.claude_code.spec import ClaudeCodeSpec
from coder_eval.agents.spec import AgentSpecBase
from coder_eval.criteria import Criterion, criterion_kinds
from coder_eval.criteria.base import TaskFacts
from coder_eval.criteria.grader_files import GraderSources
from coder_eval.criteria.suite_metrics import SuiteMetric, Threshold
from coder_eval.errors import did_you_mean
from coder_eval.sandbox import AutoSpec, SandboxSpec
from coder_eval.sandbox.base import MountPoint
from coder_eval.sandbox.provision import fixed_paths_problem
from coder_eval.sandbox.spec import ContainerPath, overlap
from coder_eval.scripted.script import ScriptRef
from coder_eval.task.dataset import DatasetSpec
from coder_eval.task.limits import RunLimits
from coder_eval.task.simulation import SimulationSpec

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


HIDDEN: dict[str, Any] = {"hidden": True}
"""A field marked so is never shown to the agent, recorded in a trajectory or in provenance."""
GRADING: dict[str, Any] = {"grading": True}
"""A field marked so defines how episodes are graded (what a task file given to regrade replaces)."""


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
    """A directory that never enters the sandbox while the agent runs.

    ``mount_point`` is in the workspace (``hidden_tests``), or an absolute folder outside it
    (``/tests``), shown to the verifier alone by ``bwrap`` and ``docker``.
    """

    path: str = Field(description="Directory, relative to the task file.")
    mount_point: MountPoint = Field(default="hidden_tests", description="Where graders get it.")


class ReferenceFile(_Strict):
    file: str = Field(description="Shell script, relative to the task file.")


class ReferenceFolder(_Strict):
    """Solution files shown to the oracle alone, at an absolute folder, and the command that runs them.

    Example: ``{path: solution, mount_point: /solution, command: "bash /solution/solve.sh"}``; ``path``
    (relative to the task file) is a folder, whose contents are copied there, or one file. Only an
    agent that runs the reference solution (``oracle``) is shown it, by ``bwrap`` and ``docker``.
    """

    path: str = Field(description="A folder or file, relative to the task file.")
    mount_point: ContainerPath = Field(default="/solution", description="Where the oracle sees it.")
    command: str = Field(min_length=1, description="The oracle's one step, run from the workspace.")


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
    success_criteria: list[Criterion] = Field(
        min_length=1, description="Graders; at least one.", json_schema_extra=GRADING
    )
    pre_run: list[Command] = Field(default_factory=list, description="Commands before the agent.")
    post_run: list[Command] = Field(
        default_factory=list,
        description="Commands in the verifier before grading (informational).",
        json_schema_extra=GRADING,
    )
    max_iterations: int = Field(
        default=1, ge=1, le=20, description="Attempts: after a failed grading the failures are the next turn."
    )
    retry: Retry = Field(default_factory=Retry, description="Retries of provider failures.")
    dataset: DatasetSpec | None = Field(default=None, description="Fan-out rows.")
    suite_thresholds: dict[str, dict[SuiteMetric, Threshold]] = Field(
        default_factory=dict,
        description="Gates over all rows of this task, by criterion id or kind: {metric: minimum}.",
        json_schema_extra=GRADING,
    )
    expected_commands: int | None = Field(
        default=None, ge=1, description="Tool calls a good solution needs (commands_efficiency's default)."
    )
    reference_solution: str | ReferenceFile | ReferenceFolder | None = Field(
        default=None, description="Oracle's script.", json_schema_extra=HIDDEN
    )
    hidden_tests: HiddenTests | None = Field(
        default=None, description="Hidden test directory.", json_schema_extra=HIDDEN | GRADING
    )
    reference: Reference | None = Field(
        default=None, description="Reference folder for graders only.", json_schema_extra=HIDDEN | GRADING
    )
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
        no_prompt = not self.agent.CAPABILITIES.needs_prompt or self.simulation is not None
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
        self._check_agent_fits()
        self._check_stop_early()
        self._check_fixed_paths()
        return self

    def _check_fixed_paths(self) -> None:
        """Folders shown at fixed paths never cover the workspace, nor one another."""
        named = {f"sandbox.scratch_dirs[{i}]": d for i, d in enumerate(self.sandbox.scratch_dirs)}
        if self.hidden_tests is not None and self.hidden_tests.mount_point.startswith("/"):
            named["hidden_tests.mount_point"] = self.hidden_tests.mount_point
        if isinstance(self.reference_solution, ReferenceFolder):
            named["reference_solution.mount_point"] = self.reference_solution.mount_point
        workdir = self.sandbox.workdir
        problem = fixed_paths_problem(self.sandbox.driver, workdir, self.container_paths())
        if problem is not None:
            raise ValueError(f"sandbox.driver: {problem}")
        items = list(named.items())
        for i, (field, path) in enumerate(items):
            if workdir is not None and overlap(path, workdir):
                raise ValueError(f"{field}: {path!r} overlaps the workspace (sandbox.workdir {workdir!r})")
            clash = next((f for f, p in items[i + 1 :] if overlap(path, p)), None)
            if clash is not None and not (field.startswith("sandbox.") and clash.startswith("sandbox.")):
                raise ValueError(f"{field}: {path!r} overlaps {clash}")

    def container_paths(self) -> list[str]:
        """The absolute paths this task's sandboxes show (its workspace, hidden tests, solution, scratch
        folders), which only ``bwrap`` and ``docker`` can.

        Example: a Harbor task -> ``["/app", "/tests", "/solution", "/logs/agent", ...]``.
        """
        paths = [*([self.sandbox.workdir] if self.sandbox.workdir else [])]
        if self.hidden_tests is not None and self.hidden_tests.mount_point.startswith("/"):
            paths.append(self.hidden_tests.mount_point)
        if isinstance(self.reference_solution, ReferenceFolder):
            paths.append(self.reference_solution.mount_point)
        return [*paths, *self.sandbox.scratch_dirs]

    def _check_agent_fits(self) -> None:
        """What the task asks of its agent kind, checked against the kind's capabilities."""
        can = self.agent.CAPABILITIES
        if can.talks_to_model and self.sandbox.network == "none":
            raise ValueError(
                f"sandbox.network: none cuts the {self.agent.type} agent off from its model (the scripted "
                "server on 127.0.0.1 too); use 'model' (only the model endpoint is reachable) or 'host'"
            )
        dialog_kinds = ", ".join(kinds_that(lambda c: c.keeps_session))
        if self.simulation is not None and not (can.keeps_session or can.checks_graders):
            raise ValueError(
                f"simulation: agent kind {self.agent.kind!r} cannot continue a session across user turns; "
                f"kinds that can: {dialog_kinds}"
            )
        if self.max_iterations > 1 and not (can.keeps_session or can.checks_graders):
            raise ValueError(
                f"max_iterations needs an agent that keeps its session across turns (the graders' "
                f"failures become its next turn); {self.agent.kind!r} does not. Kinds that do: "
                f"{dialog_kinds} (oracle and none run one iteration); or set max_iterations: 1"
            )
        if self.max_iterations > 1 and self.simulation is not None:
            raise ValueError("max_iterations and simulation both write the next user turn; use one of them")

    def _check_stop_early(self) -> None:
        """``stop_early`` stops an agent at a tool-call boundary: refused where no boundary is seen
        while the agent runs, or where a stop would cut a conversation short. (The oracle and ``none``
        are not stopped: they check the graders, and make no model calls to save.)"""
        armed = [c.type for c in self.success_criteria if getattr(c, "stop_early", None)]
        if not armed or not self.run_limits.stop_early:
            return
        if not self.agent.CAPABILITIES.live_events:
            raise ValueError(
                f"stop_early on {armed}: a {self.agent.kind} agent's events are read after it exits, so it "
                "cannot be stopped at a tool call; set run_limits.stop_early: false"
            )
        if self.agent.CAPABILITIES.checks_graders:
            return
        if self.max_iterations > 1 or self.simulation is not None:
            other = "max_iterations" if self.max_iterations > 1 else "simulation"
            raise ValueError(
                f"stop_early on {armed} cannot be combined with {other}: an early stop would end the "
                "episode the next turn belongs to"
            )

    @model_validator(mode="before")
    @classmethod
    def _criteria_task_defaults(cls, data: Any) -> Any:
        """Each criterion's block with what it takes from the task's own fields (its
        ``task_defaults``: a ``commands_efficiency`` takes the task's ``expected_commands``)."""
        if not isinstance(data, dict) or not isinstance(data.get("success_criteria"), list):
            return data
        kinds = criterion_kinds()
        filled = [
            kinds[c["type"]].task_defaults(c, data) if isinstance(c, dict) and c.get("type") in kinds else c
            for c in data["success_criteria"]
        ]
        return {**data, "success_criteria": filled}

    @model_validator(mode="after")
    def _criteria_fit_task(self) -> TaskSpec:
        """What each criterion needs of this task (its ``task_problem``), e.g. the recorded CLI it reads."""
        facts = TaskFacts(recorders={r.name: r.log for r in self.sandbox.recorders})
        for i, criterion in enumerate(self.success_criteria):
            if (problem := criterion.task_problem(facts)) is not None:
                raise ValueError(f"success_criteria[{i}]: {problem}")
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
        """The reference solution's text (the loader has read a file reference), or the command that
        runs a solution folder."""
        if isinstance(self.reference_solution, ReferenceFolder):
            return self.reference_solution.command
        return self.reference_solution if isinstance(self.reference_solution, str) else None

    def criterion_ids(self) -> list[str]:
        return [c.id or f"{i}-{c.type}" for i, c in enumerate(self.success_criteria)]

    def grader_sources(self) -> GraderSources:
        """Where this task's graders' files are: the view ``suite_folders`` reads."""
        return GraderSources(
            task_dir=self.source_dir,
            reference_dir=Path(self.reference.directory) if self.reference is not None else None,
            hidden_tests_dir=Path(self.hidden_tests.path) if self.hidden_tests is not None else None,
            template_sources=tuple(self.sandbox.template_sources),
            graded=(*self.success_criteria, *(c.command for c in self.post_run)),
        )


def _inert_stop_when(criterion: Any) -> Any:
    """A criterion without its ``stop_when``: the original format arms it only when the task sets
    ``run_limits.stop_early: true`` (``coder_eval.criteria.early_stop``)."""
    if isinstance(criterion, dict) and "stop_when" in criterion:
        return {k: v for k, v in criterion.items() if k != "stop_when"}
    return criterion


def marked(flag: str) -> tuple[str, ...]:
    """The ``TaskSpec`` fields marked with ``flag`` (``"hidden"``, ``"grading"``), in schema order."""
    return tuple(
        name
        for name, field in TaskSpec.model_fields.items()
        if isinstance(field.json_schema_extra, dict) and field.json_schema_extra.get(flag)
    )


HIDDEN_FIELDS = marked("hidden")
"""``("reference_solution", "hidden_tests", "reference")``: hidden material, never in a recording."""
GRADING_FIELDS = marked("grading")
"""``("success_criteria", "post_run", "suite_thresholds", "hidden_tests", "reference")``."""
TASK_FIELDS = frozenset(TaskSpec.model_fields) - {"source_path", "dataset_row"}
