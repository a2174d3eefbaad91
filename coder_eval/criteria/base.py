"""The criterion seam: a pure function of (workspace after the run, trajectory) -> score, details.

Each criterion kind is a pydantic model (its YAML fields) with an ``evaluate`` method. It reads the
workspace only through the sandbox verbs (``exec``, ``read_file``, ``glob`` ...), so it grades the same
way on every driver, and says what it needs (``needs``): the workspace's files, commands run in the
verifier, the trajectory; a finished run can then be re-graded from its trajectories and workspace
snapshots, and a task whose graders only read files needs no verifier sandbox at all.

Example (YAML)::

    success_criteria:
      - type: file_exists
        path: "out/*.txt"
        description: the report was written
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal, get_args

import jmespath
from jmespath.exceptions import JMESPathError
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

from coder_eval.criteria.early_stop import Decision, armed_spelling
from coder_eval.criteria.suite_metrics import SuiteMetric, Threshold
from coder_eval.errors import WorkspaceFileError
from coder_eval.patterns import check_pattern
from coder_eval.sandbox.base import Sandbox
from coder_eval.sandbox.pytest_reports import PytestReport
from coder_eval.sandbox.spec import TemplateSource
from coder_eval.trajectory import CliCall, Event


def check_regex(pattern: str) -> str:
    """Validate a regular expression at load time, so a typo fails before any sandbox exists."""
    try:
        re.compile(pattern)
    except re.error as exc:
        raise ValueError(f"invalid regex {pattern!r}: {exc}") from exc
    check_pattern(pattern)
    return pattern


Regex = Annotated[str, AfterValidator(check_regex)]
"""A string that must compile as a Python regular expression."""


def check_jmespath(expression: str) -> str:
    """Validate a JMESPath expression at load time."""
    try:
        jmespath.compile(expression)
    except JMESPathError as exc:
        raise ValueError(f"invalid JMESPath {expression!r}: {exc}") from exc
    return expression


JmesPath = Annotated[str, AfterValidator(check_jmespath)]
"""A string that must compile as a JMESPath expression."""

ORIGINAL_PASS_THRESHOLD = 0.9
"""The default ``pass_threshold`` of every kind the original coder_eval format has (docs/compat.md)."""
JUDGE_PASS_THRESHOLD = 0.7
"""The default ``pass_threshold`` of ``llm_judge`` and ``agent_judge``: the score a vote needs."""


@dataclass(frozen=True)
class HiddenMaterial:
    """Material that never enters the agent's sandbox (the verifier has it at ``mount_point``)."""

    hidden_tests: Path | None = None
    mount_point: str = "hidden_tests"
    reference_dir: Path | None = None


async def _no_reports() -> list[PytestReport]:
    return []


@dataclass(frozen=True)
class GradingContext:
    """What a criterion may look at: the verifier's sandbox (the agent's final workspace), the
    trajectory, and its own prepared state.

    ``recorders`` maps each recorded CLI to its workspace log name; ``pytest_reports`` returns what
    pytest counted in the verifier since the criterion started.
    """

    sandbox: Sandbox
    events: Sequence[Event]
    task_dir: Path
    hidden: HiddenMaterial = field(default_factory=HiddenMaterial)
    prepared: Any = None
    seed: int = 0
    final_message: str | None = None
    recorders: Mapping[str, str | None] = field(default_factory=dict)
    pytest_reports: Callable[[], Awaitable[list[PytestReport]]] = _no_reports
    agent_paths: Mapping[str, str] = field(default_factory=dict)
    dropped: Sequence[str] = ()
    """Workspace paths the agent left that the verifier did not restore (links leading out, devices)."""

    def cli_calls(self, names: Iterable[str] | None = None) -> list[CliCall]:
        """The harness's records of recorded-CLI calls (``names``: only those commands), one per
        call in the order they started: a call's record from when it returned replaces the one
        written before it ran; a call that never returned keeps ``exit_code`` None."""
        wanted = set(names) if names is not None else None
        calls: dict[str | int, CliCall] = {}
        for index, event in enumerate(self.events):
            if isinstance(event, CliCall) and (wanted is None or event.name in wanted):
                calls[event.call_id or index] = event
        return list(calls.values())


@dataclass(frozen=True)
class Verdict:
    """A grader's result; ``passed`` defaults to ``score >= pass_threshold``."""

    score: float
    details: dict[str, Any] = field(default_factory=dict)
    passed: bool | None = None
    observed_label: str | None = None
    expected_label: str | None = None


Need = Literal["workspace", "commands", "trajectory"]
"""What a criterion reads: ``workspace`` (its files, through ``read_file`` and ``glob``), ``commands``
(it also runs commands in the verifier, or copies it for a judge: a real sandbox is made for it),
``trajectory`` (the recorded events). Criteria that need no ``commands`` are graded straight from the
workspace snapshot when they can be (``verifier.py``)."""


class CriterionFileError(ValueError):
    """A file a criterion names cannot be used at load time; ``field`` is the criterion's field."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


@dataclass(frozen=True)
class TaskFacts:
    """What a criterion may ask of the task it is in, when the task is validated."""

    recorders: Mapping[str, str | None]
    """The recorded CLIs and shims the sandbox declares: name -> the log it writes to."""


class CriterionSpec(BaseModel):
    """Fields every criterion has. ``needs`` says what it reads, ``label_field`` which of its fields
    is a label (class attributes, not YAML fields)."""

    needs: ClassVar[frozenset[Need]] = frozenset({"workspace"})
    label_field: ClassVar[str | None] = None
    """A labelling criterion's expected-label field, where an empty value is the label ``none`` on
    purpose (``expected_skill`` of ``skill_triggered``); None for other kinds."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    type: str = Field(description="Criterion kind.")
    id: str | None = Field(default=None, description="Stable id (default: '<index>-<type>').")
    description: str = Field(default="", description="What is checked, in words.")
    weight: float = Field(default=1.0, ge=0, description="Weight in the episode score; 0 = informational.")
    pass_threshold: float = Field(default=1.0, ge=0, le=1, description="Score needed to pass.")
    gating: bool | None = Field(
        default=None, description="Must pass for the episode to pass (default: weight > 0)."
    )
    suite_thresholds: dict[SuiteMetric, Threshold] = Field(
        default_factory=dict, description="Gates over all rows of the task: {metric: minimum}."
    )

    @model_validator(mode="before")
    @classmethod
    def _early_stop_arming(cls, data: Any) -> Any:
        """``stop_early`` only where it can work; ``stop_when`` (the older spelling) read as it."""
        if not isinstance(data, dict):
            return data
        arming = None if "stop_early" in cls.model_fields else kinds_with_early_stop
        return armed_spelling(data, str(data.get("type")), arming, cls.live_polarities(data))

    @classmethod
    def live_polarities(cls, data: dict[str, Any]) -> frozenset[Decision]:
        """The live decisions a criterion with these fields can reach (kinds with early stop)."""
        return frozenset({"pass", "fail"})

    def live_decision(self, verdict: Verdict) -> Decision | None:
        """Whether ``verdict``, on a partial trajectory, already settles this criterion (None: not yet).

        Only the early-stop kinds answer; the default is that nothing is settled before the end.
        """
        return None

    @classmethod
    def kind(cls) -> str | None:
        """The kind a criterion class declares (its ``type: Literal[...]``), None on the base."""
        kinds = get_args(cls.model_fields["type"].annotation)
        return str(kinds[0]) if len(kinds) == 1 else None

    @property
    def is_gating(self) -> bool:
        return self.weight > 0 if self.gating is None else self.gating

    def model_keys(self) -> tuple[str, ...]:
        """Host variables, any one of which grading needs (a judge's model); ``()``: none."""
        return ()

    @classmethod
    def task_defaults(cls, raw: dict[str, Any], task: Mapping[str, Any]) -> dict[str, Any]:
        """The criterion's block as written, with what it takes from the task's own fields (the
        task's raw data, before validation). Default: nothing."""
        return raw

    def task_problem(self, task: TaskFacts) -> str | None:
        """What this criterion needs of its task that the task lacks, in words (None: it fits)."""
        return None

    def with_task_files(self, task_dir: Path, sources: Sequence[TemplateSource]) -> CriterionSpec:
        """This criterion with files it names resolved at load time, relative to ``task_dir`` or from
        the task's template ``sources`` (``CriterionFileError`` naming the field). Default: itself."""
        return self

    async def prepare(self, sandbox: Sandbox) -> Any:
        """Runs after set-up, before the agent (e.g. hash protected files). Default: nothing."""
        return None

    async def evaluate(self, ctx: GradingContext) -> Verdict:
        """Grade the finished episode."""
        raise NotImplementedError

    def tests_command(self) -> str | None:
        """The pytest command whose tests this criterion grades: run with ``--collect-only`` in the
        pristine workspace before the agent, its ids become ``prepared`` (``expected_tests.py``)."""
        return None


def pass_threshold_field(default: float) -> Any:
    """The ``pass_threshold`` field with a kind's own default."""
    return Field(default=default, ge=0, le=1, description="Score needed to pass.")


class OriginalCriterion(CriterionSpec):
    """A kind the original coder_eval format has: its ``pass_threshold`` defaults to the original's 0.9.

    Kinds only coder_eval has keep 1.0. For a score with fewer than ten equal checks the two agree
    (one failed check of nine scores 0.89); they differ on ratios such as ``commands_efficiency``.
    """

    pass_threshold: float = pass_threshold_field(ORIGINAL_PASS_THRESHOLD)


async def matching_files(sandbox: Sandbox, pattern: str) -> list[str]:
    """Workspace-relative paths of the regular files matching a glob, sorted (``dir/**``: all below)."""
    return await sandbox.glob(pattern)


async def read_text(sandbox: Sandbox, path: str, limit: int = 5_000_000) -> str:
    """A workspace file as text (undecodable bytes replaced), at most ``limit`` bytes.

    ``WorkspaceFileError`` when it is not a readable file in the workspace.
    """
    return (await sandbox.read_file(path, limit=limit)).decode("utf-8", errors="replace")


MAX_TEXT_BYTES = 5_000_000
"""The most a check reads of the agent's files, all matched files together."""


async def read_texts(sandbox: Sandbox, paths: Sequence[str], limit: int = MAX_TEXT_BYTES) -> list[str]:
    """Workspace files as text, whole (undecodable bytes replaced). ``WorkspaceFileError`` when
    together they are larger than ``limit``: a check that read only part of them could miss what
    must not be there, so files too large to check are the agent's failure.

    Example: ``await read_texts(sandbox, ["out.txt"])`` -> ``["forty-two\n"]``.
    """
    texts, left = [], limit
    for path in paths:
        data = await sandbox.read_file(path, limit=left + 1)
        if len(data) > left:
            raise WorkspaceFileError(
                f"{path!r} takes the files checked past {limit} bytes: too large to check"
            )
        left -= len(data)
        texts.append(data.decode("utf-8", errors="replace"))
    return texts


def parse_json(text: str, name: str) -> Any:
    """A workspace file's JSON; ``WorkspaceFileError`` (the agent's failure) when it is not JSON or
    is nested too deep to parse.

    Example: ``parse_json("[" * 200_000, "out.json")`` raises ``WorkspaceFileError``; so does a
    number of 5,000 digits (past Python's int-string limit). ``1e999`` reads as infinity.
    """
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise WorkspaceFileError(f"{name} is not JSON: {exc.msg} (line {exc.lineno})") from exc
    except ValueError as exc:  # an integer past Python's int-string limit
        raise WorkspaceFileError(f"{name} cannot be read as JSON: {str(exc)[:200]}") from exc
    except RecursionError as exc:
        raise WorkspaceFileError(f"{name} is nested too deep to read as JSON") from exc


def nested_strings(value: Any) -> Iterator[str]:
    """Every string inside ``value``: nested lists, tuples and mappings included.

    Example: ``list(nested_strings({"a": ["x", {"b": "y"}], "n": 1}))`` -> ``["x", "y"]``.
    """
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from nested_strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from nested_strings(item)


def fraction(checks: dict[str, bool]) -> float:
    """Share of checks that hold; 1.0 when there are none."""
    return sum(checks.values()) / len(checks) if checks else 1.0


def kinds_with_early_stop() -> list[str]:
    """The criterion kinds that can be armed with ``stop_early`` (a ``stop_early`` field), built-in
    and plugin alike: ``["command_executed", "skill_triggered"]``."""
    found: set[str] = set()
    todo = list(CriterionSpec.__subclasses__())
    while todo:
        spec = todo.pop()
        todo.extend(spec.__subclasses__())
        if "stop_early" in spec.model_fields and (kind := spec.kind()) is not None:
            found.add(kind)
    return sorted(found)
