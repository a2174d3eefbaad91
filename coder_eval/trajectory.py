"""The trajectory: one JSONL file per episode, the contract between the runner and the analysis.

Every line is one event with ``type`` and ``schema_version``. The first line is ``episode_start``,
the last ``episode_end``; a file without ``episode_end`` is an interrupted episode.

Example::

    with TrajectoryWriter(path) as sink:
        sink.write(EpisodeStart(run_id="r1", episode_id="t--base--r0", ...))
        sink.write(ToolCall(id="c1", name="Bash", input={"command": "ls"}))
        ...
    events = read_trajectory(path).events
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import threading
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Annotated, Any, Literal, NamedTuple, get_args

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from coder_eval.errors import RunWriteError, TrajectoryError
from coder_eval.untrusted_json import event_line

SCHEMA_VERSION = 1
"""Bumped on any incompatible change; readers refuse other versions."""

Outcome = Literal["pass", "fail", "invalid"]
Status = Literal[
    "completed",
    "timeout",
    "max_turns",
    "budget_exceeded",
    "agent_error",
    "infra_error",
    "grader_error",
    "interrupted",
    "resource_limit",
    "tampered",
    "stopped_early",
    "model_stalled",
]
InvalidCause = Literal["harness", "provider", "grader", "agent"]
"""Why an episode measured nothing, as the harness itself saw it: ``harness`` (coder_eval or where it
ran raised, or stopped it: a lost dask scheduler or worker, a sandbox that could not be made, an agent
CLI that ended before its model answered once), ``provider`` (the model endpoint answered with a fault,
5xx, 429 or 401, or not at all, at the harness's side of the connection), ``grader`` (a gating
criterion could not run). ``agent`` is never written any more: what an agent's processes do to
themselves is its ``fail`` (older files may hold it). ``--resume`` runs the harness's again;
``--retry-invalid`` runs every one again."""
RecordSource = Literal["scripted", "proxy", "agent"]
"""Where an episode's tool calls, usage and cost were checked: ``scripted`` (the scripted model
server's own record), ``proxy`` (the harness's API proxy in front of a real model), ``agent`` (no
harness vantage point: the agent CLI's own account, unverified)."""
TOOL_OUTPUT_LIMIT = 20_000
"""Characters of a tool result kept in the trajectory; the full length is recorded beside it."""


def now() -> datetime:
    """The current time, timezone-aware UTC."""
    return datetime.now(UTC)


class _Event(BaseModel):
    model_config = ConfigDict(extra="forbid")
    schema_version: int = Field(default=SCHEMA_VERSION, description="Trajectory schema version.")
    ts: datetime = Field(default_factory=now, description="When the event was recorded (UTC).")


class Usage(BaseModel):
    """Token counts by bucket."""

    model_config = ConfigDict(extra="forbid")
    input_tokens: int = Field(default=0, description="Uncached input tokens.")
    output_tokens: int = Field(default=0, description="Output tokens.")
    cache_read_tokens: int = Field(default=0, description="Input tokens read from the prompt cache.")
    cache_creation_tokens: int = Field(default=0, description="Input tokens written to the prompt cache.")

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_read_tokens=self.cache_read_tokens + other.cache_read_tokens,
            cache_creation_tokens=self.cache_creation_tokens + other.cache_creation_tokens,
        )

    @property
    def total(self) -> int:
        """All tokens, every bucket."""
        return self.input_tokens + self.output_tokens + self.cache_read_tokens + self.cache_creation_tokens


class RegradeOrigin(BaseModel):
    """Where a re-graded episode's agent run was recorded, and what it was graded before.

    A re-graded trajectory keeps the agent's events as recorded and carries new criteria and a new
    ``episode_end`` (``coder-eval regrade``, docs/regrade.md).
    """

    model_config = ConfigDict(extra="forbid")
    run_id: str = Field(description="The run the agent's events were recorded in.")
    run_dir: str = Field(description="That run's directory, as given to regrade.")
    outcome: Outcome = Field(description="The episode's outcome in that run.")
    status: Status = Field(description="Its status in that run.")
    score: float = Field(default=0.0, description="Its score in that run.")
    criteria: Literal["recorded", "task_file"] = Field(
        description="recorded: the criteria the run recorded; task_file: as the task file now defines them."
    )
    task_file: str | None = Field(default=None, description="The task file the criteria came from.")
    regraded_at: datetime = Field(default_factory=now, description="When it was re-graded (UTC).")
    versions: dict[str, str] = Field(
        default_factory=dict, description="coder_eval and Python that re-graded it."
    )


class EpisodeStart(_Event):
    """First line: what ran, with the fully resolved configuration."""

    type: Literal["episode_start"] = "episode_start"
    run_id: str = Field(description="The run this episode belongs to.")
    episode_id: str = Field(description="Deterministic id: <task_id>--<variant_id>--r<repeat>.")
    task_id: str = Field(description="Task id (with the dataset row id for fanned-out tasks).")
    variant_id: str = Field(default="default", description="Experiment variant.")
    repeat: int = Field(default=0, description="Repeat index, from 0.")
    seed: int = Field(description="Seed derived from the episode id; scripted models branch on it.")
    tags: list[str] = Field(default_factory=list, description="Task tags.")
    agent: dict[str, Any] = Field(default_factory=dict, description="Resolved agent block.")
    task: dict[str, Any] = Field(default_factory=dict, description="Resolved task (JSON form).")
    task_hash: str | None = Field(
        default=None,
        description="sha256 of the resolved task, hidden fields and files it reads (--resume compares it).",
    )
    provenance: dict[str, str] = Field(
        default_factory=dict, description="For each resolved field path, the config layer that set it."
    )
    dataset_row: dict[str, Any] | None = Field(default=None, description="The dataset row, if any.")
    versions: dict[str, str] = Field(default_factory=dict, description="coder_eval, Python, agent CLI.")
    scripted: bool = Field(default=False, description="True when the model is the scripted server.")
    started_at: datetime = Field(default_factory=now, description="Episode start (UTC).")
    regraded_from: RegradeOrigin | None = Field(
        default=None, description="Set on a re-graded episode: the recorded run its agent events come from."
    )


class Message(_Event):
    """One conversation message (assistant, user or system)."""

    type: Literal["message"] = "message"
    role: Literal["assistant", "user", "system"] = Field(description="Who spoke.")
    content: list[dict[str, Any]] = Field(
        default_factory=list, description="Content blocks as the API returns them (text, tool_use, ...)."
    )
    model: str | None = Field(default=None, description="Model that produced an assistant message.")
    usage: Usage | None = Field(default=None, description="Per-message token usage, when known.")
    parent_tool_use_id: str | None = Field(default=None, description="Set on sub-agent messages.")
    simulated: bool = Field(default=False, description="A user turn written by a user simulator.")


class ToolCall(_Event):
    """The agent asked for a tool."""

    type: Literal["tool_call"] = "tool_call"
    id: str = Field(description="Tool-use id, shared with the matching tool_result.")
    name: str = Field(description="Tool name (Bash, Read, Edit, Skill, ...).")
    input: dict[str, Any] = Field(default_factory=dict, description="Tool input as given.")
    parent_tool_use_id: str | None = Field(default=None, description="Set on sub-agent tool calls.")


class ToolResult(_Event):
    """The result of one tool call."""

    type: Literal["tool_result"] = "tool_result"
    id: str = Field(description="Tool-use id of the call this answers.")
    output: str = Field(default="", description=f"Output, cut to {TOOL_OUTPUT_LIMIT} characters.")
    output_chars: int = Field(default=0, description="Length of the full output.")
    is_error: bool = Field(default=False, description="The tool reported an error.")
    exit_code: int | None = Field(default=None, description="Exit code, for commands.")
    duration_s: float | None = Field(default=None, description="Seconds from call to result.")


class CliCall(_Event):
    """A call to a recorded CLI, made and recorded by the harness (never by the agent's files).

    Each call is recorded before its target runs (``exit_code`` null) and again when it returned,
    with the same ``call_id``; graders read the later one in the earlier one's place.
    """

    type: Literal["cli_call"] = "cli_call"
    call_id: str = Field(default="", description="Shared by a call's records ('' in older files).")
    name: str = Field(description="The recorded command's name.")
    argv: list[str] = Field(default_factory=list, description="The command line, name first.")
    cwd: str = Field(default=".", description="Working directory, relative to the workspace when inside.")
    exit_code: int | None = Field(
        description="Exit code returned to the agent; null: the call had not returned (yet)."
    )
    duration_s: float = Field(default=0.0, description="Seconds the call took.")
    stdout: str = Field(default="", description="stdout, cut to 10,000 bytes.")
    stdout_truncated: bool = Field(default=False, description="stdout was cut.")
    stderr: str = Field(default="", description="stderr, cut to 10,000 bytes.")


class ToolReturn(BaseModel):
    """A tool result the agent's CLI sent its model, as the model endpoint received it."""

    model_config = ConfigDict(extra="forbid")
    id: str | None = Field(default=None, description="The tool-use id it answers (null: the API has none).")
    name: str | None = Field(default=None, description="The tool's name, when the API says it.")
    output: str = Field(default="", description=f"The result's text, cut to {TOOL_OUTPUT_LIMIT} characters.")
    output_chars: int = Field(default=0, description="Length of the full text.")
    is_error: bool | None = Field(
        default=None, description="The result was marked an error (null: the API has no flag)."
    )


class ModelCall(_Event):
    """One request to the model and its answer, recorded by the harness where the request crossed a
    point it owns (the scripted server, or its API proxy in front of a real model); never by the agent.

    Written after the agent's processes are dead, in request order; ``ts`` is when it was written,
    ``requested_at`` when the request arrived. ``content`` is the answer in the Anthropic shape
    whatever the wire dialect (text and ``tool_use`` blocks, ids and names as the CLI saw them).
    """

    type: Literal["model_call"] = "model_call"
    seq: int = Field(description="Its place among the episode's requests at the endpoint, from 0.")
    source: Literal["scripted", "proxy"] = Field(description="Which harness point recorded it.")
    dialect: str = Field(default="anthropic", description="Wire API: anthropic, responses, gemini, other.")
    path: str = Field(default="", description="The request path, without its query string.")
    kind: str = Field(
        default="main", description="main, subagent, auxiliary (no tools offered), count_tokens or other."
    )
    position: int | None = Field(
        default=None, description="Assistant turns already in the request's conversation (its step)."
    )
    status: int | None = Field(description="HTTP status of the answer; null: no answer came.")
    error: str | None = Field(default=None, description="The fault served, or why no answer came.")
    model: str | None = Field(default=None, description="The model that answered.")
    content: list[dict[str, Any]] = Field(
        default_factory=list, description="What the model answered: text and tool_use blocks."
    )
    tool_results: list[ToolReturn] = Field(
        default_factory=list, description="Tool results the request carried (its last user turn)."
    )
    usage: Usage | None = Field(default=None, description="Token usage as served.")
    cost_usd: float | None = Field(default=None, description="That usage priced (null: price unknown).")
    requested_at: datetime = Field(default_factory=now, description="When the request arrived (UTC).")
    duration_s: float | None = Field(default=None, description="Seconds from request to the answer's end.")


class RecordCheck(BaseModel):
    """Where an episode's tool calls, usage and cost come from, and what of the agent CLI's own account
    had no counterpart at the model endpoint (docs/trajectory.md).

    An unverified event (a tool call the model never asked for, a result it was never shown, an
    assistant message it never wrote) is kept in the trajectory but never satisfies a criterion.
    """

    model_config = ConfigDict(extra="forbid")
    source: RecordSource = Field(description="scripted, proxy, or agent (no vantage point: unverified).")
    confined: bool = Field(
        default=False, description="The agent ran in a sandbox that is a boundary (bwrap, docker)."
    )
    model_calls: int = Field(default=0, description="Requests the endpoint recorded.")
    tool_calls: int = Field(default=0, description="Tool calls in the agent's stream.")
    unverified_count: int = Field(default=0, description="Events of the agent's stream with no counterpart.")
    unverified: list[str] = Field(default_factory=list, description="Those events, described (the first 50).")
    unverified_ids: list[str] = Field(
        default_factory=list, description="Tool-use ids of the unverified tool calls and results."
    )
    reported_usage: Usage | None = Field(default=None, description="The usage the agent CLI reported.")
    reported_cost_usd: float | None = Field(default=None, description="The cost the agent CLI reported.")
    notes: list[str] = Field(default_factory=list, description="What was refused or replaced, and why.")

    @property
    def verified(self) -> bool:
        """Checked at a harness point, in a sandbox the agent could not leave."""
        return self.source != "agent" and self.confined


Phase = Literal["setup", "agent", "stop", "verify", "end"]


class PhaseEvent(_Event):
    """An episode phase began. ``details`` says where it runs (driver, workspace path, HOME)."""

    type: Literal["phase"] = "phase"
    name: Phase = Field(description="setup, agent, stop, verify or end.")
    details: dict[str, Any] = Field(default_factory=dict, description="Sandbox driver and paths, notes.")


class CriterionResult(_Event):
    """One grader's verdict."""

    type: Literal["criterion"] = "criterion"
    criterion_id: str = Field(description="Stable id: the criterion's `id`, else `<index>-<kind>`.")
    kind: str = Field(description="Criterion kind (file_exists, hidden_tests, ...).")
    description: str = Field(default="", description="What the criterion checks.")
    score: float = Field(description="Score in [0, 1].")
    passed: bool = Field(description="score >= pass_threshold and no error.")
    gating: bool = Field(default=True, description="The episode passes only if every gating one passes.")
    weight: float = Field(default=1.0, description="Weight in the episode score (0 = informational).")
    details: dict[str, Any] = Field(default_factory=dict, description="Grader-specific evidence.")
    error: str | None = Field(default=None, description="Set when the grader itself failed.")
    observed_label: str | None = Field(default=None, description="Classification: the label observed.")
    expected_label: str | None = Field(default=None, description="Classification: the label expected.")


class Timings(BaseModel):
    """Seconds spent in each phase of an episode: setup -> agent -> stop -> verify -> end."""

    model_config = ConfigDict(extra="forbid")
    setup_s: float = Field(default=0.0, description="The agent's sandbox, pre_run, criteria preparation.")
    agent_s: float = Field(default=0.0, description="The agent's run.")
    stop_s: float = Field(default=0.0, description="Killing what the agent started; the workspace snapshot.")
    verify_s: float = Field(default=0.0, description="The verifier's sandbox, post_run and the criteria.")
    end_s: float = Field(default=0.0, description="Removing the sandboxes.")
    grade_s: float = Field(default=0.0, description="Same as verify_s (kept for older readers).")
    total_s: float = Field(default=0.0, description="Wall time of the whole episode.")


class WorkspaceSnapshot(BaseModel):
    """The agent's final workspace, kept in the run directory as a gzip tar (for ``coder-eval regrade``)."""

    model_config = ConfigDict(extra="forbid")
    file: str | None = Field(
        default=None,
        description="Relative to the run directory (snapshots/<episode_id>.tar.gz); null: not kept.",
    )
    bytes: int = Field(default=0, description="Size of the kept file.")
    entries: int = Field(default=0, description="Files, folders and links kept.")
    left_out: int = Field(default=0, description="Entries left out by the sandbox's ignore_patterns.")
    seconds: float = Field(default=0.0, description="Time spent writing it.")
    note: str | None = Field(default=None, description="Why it was not kept (over the size cap).")


class SkillLoad(BaseModel):
    """Which skills and plugins the agent was offered, which its CLI said it loaded, which it invoked.

    ``loaded`` is what the agent's own CLI listed before the model saw a request: Claude Code's
    ``init`` message (``<plugin>:<skill>`` entries and its plugins), OpenCode's ``opencode debug
    skill`` listing in the same sandbox; null when the CLI reports none (Codex, Gemini CLI).
    ``invoked`` is what the trajectory shows the agent using: a skill-tool call naming the skill, or
    a tool call reading its ``SKILL.md``.
    """

    model_config = ConfigDict(extra="forbid")
    plugins: list[str] = Field(default_factory=list, description="Plugins offered (staged folder names).")
    offered: list[str] = Field(default_factory=list, description="Skills offered, by name.")
    loaded_plugins: list[str] | None = Field(
        default=None, description="Offered plugins the CLI listed as loaded (null: it lists none)."
    )
    loaded: list[str] | None = Field(
        default=None, description="Offered skills the CLI listed as loaded (null: it lists none)."
    )
    invoked: list[str] = Field(default_factory=list, description="Skills the agent invoked, any of them.")
    evidence: str | None = Field(default=None, description="Where 'loaded' comes from.")


class EpisodeEnd(_Event):
    """Last line: the outcome and the totals."""

    type: Literal["episode_end"] = "episode_end"
    outcome: Outcome = Field(description="pass / fail / invalid (invalid: the agent was not measured).")
    status: Status = Field(description="How the episode ended.")
    score: float = Field(default=0.0, description="Weighted mean of criterion scores.")
    timings: Timings = Field(default_factory=Timings, description="Phase timings.")
    usage: Usage = Field(
        default_factory=Usage,
        description="Agent token totals by bucket: as the endpoint served them when it has a record "
        "(record.source), else as the agent CLI reported them.",
    )
    cost_usd: float | None = Field(
        default=None, description="Agent cost, from the same source; null when the price is unknown."
    )
    num_turns: int = Field(default=0, description="Agent turns (assistant messages at top level).")
    duration_api_s: float | None = Field(default=None, description="Time the agent spent in model calls.")
    error: str | None = Field(default=None, description="Why the episode is invalid or ended early.")
    agent_versions: dict[str, str] = Field(
        default_factory=dict, description="Versions the agent reported while running (e.g. claude_code)."
    )
    notes: list[str] = Field(
        default_factory=list,
        description="Harness notes that leave the outcome as it is: a sandbox left behind, dropped links.",
    )
    final_message: str | None = Field(
        default=None, description="The agent's final answer, as graders read it."
    )
    agent_status: Status | None = Field(
        default=None,
        description="How the agent's own run ended, before grading (status may say grader_error).",
    )
    agent_error: str | None = Field(default=None, description="The agent's own error, before grading.")
    snapshot: WorkspaceSnapshot | None = Field(
        default=None,
        description="The workspace as the agent left it, kept in the run directory for re-grading.",
    )
    skills: SkillLoad | None = Field(
        default=None, description="Skills offered, loaded and invoked (agents that load skills)."
    )
    invalid_cause: InvalidCause | None = Field(
        default=None,
        description="Set on an invalid episode, from the harness's own evidence: harness, provider or "
        "grader (--resume runs the harness's again; 'agent' only in older files).",
    )
    record: RecordCheck | None = Field(
        default=None,
        description="Where tool calls, usage and cost come from (the endpoint's record, or the agent's "
        "own, unverified) and what had no counterpart there; null in older files.",
    )


Event = Annotated[
    EpisodeStart
    | Message
    | ToolCall
    | ToolResult
    | CliCall
    | ModelCall
    | PhaseEvent
    | CriterionResult
    | EpisodeEnd,
    Field(discriminator="type"),
]
EVENT_ADAPTER: TypeAdapter[Event] = TypeAdapter(Event)
EVENT_TYPES = frozenset(kind.model_fields["type"].default for kind in get_args(get_args(Event)[0]))
"""Every event ``type`` a trajectory line may have (``episode_start`` ... ``episode_end``)."""


def json_schema() -> dict[str, Any]:
    """The JSON Schema of one trajectory line (exported to ``docs/trajectory.schema.json``)."""
    schema = EVENT_ADAPTER.json_schema()
    schema["title"] = "coder_eval trajectory event"
    schema["$comment"] = f"schema_version {SCHEMA_VERSION}; one event per line of a JSONL file."
    return schema


def export_schema(path: Path) -> None:
    """Write the JSON Schema to ``path`` (``make schema`` runs this for ``docs/``)."""
    path.write_text(json.dumps(json_schema(), indent=2, sort_keys=True) + "\n", encoding="utf-8")


class DiskSync:
    """Syncs closed trajectories to disk in one background thread, so that no episode (and no event
    loop) waits for the disk: the files that close while one trip runs are synced on the next.

    A closed trajectory is already in the operating system's hands (each event is flushed as it is
    written), so a harness killed with SIGKILL loses none of it; the sync is what keeps it through a
    power loss, and ``wait`` says when it has happened (``run_batch`` and ``RunDir.write_manifest``
    wait, so a run's manifest never counts an episode the disk does not hold).

    Example::

        DISK_SYNC.submit(os.dup(handle.fileno()), "t--base--r0.jsonl")  # the syncer closes the copy
        DISK_SYNC.wait()  # every file submitted so far is on disk, or RunWriteError
    """

    def __init__(self) -> None:
        self._fresh()

    def _fresh(self) -> None:
        """No file pending and no thread (also a forked child's state: the parent's files are its)."""
        self._lock = threading.Condition()
        self._pending: list[tuple[int, str]] = []
        self._submitted = self._done = 0
        self._errors: list[tuple[str, str]] = []
        self._thread: threading.Thread | None = None

    def submit(self, fd: int, name: str) -> None:
        """Sync ``fd`` (then close it) in the background; ``name`` is the file a failure names."""
        with self._lock:
            self._pending.append((fd, name))
            self._submitted += 1
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._loop, name="coder_eval-sync", daemon=True)
                self._thread.start()
            self._lock.notify_all()

    def wait(self) -> None:
        """Block until every file submitted before this call is synced; ``RunWriteError`` naming the
        first file the disk refused (the run cannot vouch for that episode)."""
        with self._lock:
            target = self._submitted
            self._lock.wait_for(lambda: self._done >= target)
            errors, self._errors = self._errors, []
        if errors:
            more = f" (and {len(errors) - 1} more files)" if len(errors) > 1 else ""
            raise RunWriteError(errors[0][0], f"cannot sync it to disk: {errors[0][1]}{more}")

    def drain(self) -> None:
        """``wait``, a failure left unraised: what a process leaving has no way to report."""
        with contextlib.suppress(RunWriteError):
            self.wait()

    def _loop(self) -> None:
        while True:
            with self._lock:
                self._lock.wait_for(lambda: bool(self._pending))
                batch, self._pending = self._pending, []
            errors = [error for fd, name in batch if (error := _synced(fd, name)) is not None]
            with self._lock:
                self._done += len(batch)
                self._errors.extend(errors)
                self._lock.notify_all()


def _synced(fd: int, name: str) -> tuple[str, str] | None:
    """Sync and close ``fd``; the file and the reason when it could not be synced."""
    try:
        os.fsync(fd)
    except OSError as exc:
        return name, exc.strerror or str(exc)
    finally:
        with contextlib.suppress(OSError):
            os.close(fd)
    return None


DISK_SYNC = DiskSync()
"""The process's one syncer (``TrajectoryWriter`` hands it each durable file as it closes;
``RunDir.write_manifest`` waits for it, and so does the process before it exits)."""
atexit.register(DISK_SYNC.drain)
os.register_at_fork(after_in_child=DISK_SYNC._fresh)


class TrajectoryWriter:
    """Append-only JSONL writer; every event is flushed to the OS as it is written, and the file is
    synced to disk after it closes, by ``DISK_SYNC`` (unless ``durable=False``: a scratch copy that
    another process writes durably, as a dask worker's is).

    ``events`` keeps what this writer wrote, so graders read the trajectory without re-parsing it.
    Text the agent produced never makes an event unwritable: undecodable bytes and lone surrogates
    are kept as JSON escapes (``coder_eval/untrusted_json.py``). ``renamed`` (a path -> the path the
    file names instead) writes each line as it would read had the episode run from the path named
    (a task's files frozen for the run, ``coder_eval.run.frozen``).
    """

    def __init__(self, path: Path, *, durable: bool = True, renamed: Sequence[tuple[str, str]] = ()) -> None:
        self.path = path
        self.durable = durable
        self.events: list[Event] = []
        self.renamed = [(json.dumps(a)[1:-1], json.dumps(b, ensure_ascii=False)[1:-1]) for a, b in renamed]
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._file = path.open("a", encoding="utf-8")
        except OSError as exc:
            raise RunWriteError.of(path, exc) from exc

    def write(self, event: Event) -> None:
        """Append one event as one line and flush it (``RunWriteError`` when the file cannot take it)."""
        line = event_line(event) + "\n"
        for copy, named in self.renamed:
            line = line.replace(copy, named)
        try:
            self._file.write(line)
            self._file.flush()
        except OSError as exc:
            raise RunWriteError.of(self.path, exc) from exc
        self.events.append(event)

    def close(self) -> None:
        """Flush to the operating system and close; when durable, the sync to disk is ``DISK_SYNC``'s."""
        if self._file.closed:
            return
        try:
            self._file.flush()
            if self.durable:
                DISK_SYNC.submit(os.dup(self._file.fileno()), str(self.path))
        except OSError as exc:
            raise RunWriteError.of(self.path, exc) from exc
        finally:
            with contextlib.suppress(OSError):
                self._file.close()

    def __enter__(self) -> TrajectoryWriter:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


class Trajectory(NamedTuple):
    """A read trajectory: its events, and what was wrong with the file, if anything."""

    path: Path
    events: list[Event]
    problems: list[str]

    @property
    def start(self) -> EpisodeStart | None:
        first = self.events[0] if self.events else None
        return first if isinstance(first, EpisodeStart) else None

    @property
    def end(self) -> EpisodeEnd | None:
        last = self.events[-1] if self.events else None
        return last if isinstance(last, EpisodeEnd) else None

    @property
    def complete(self) -> bool:
        return self.start is not None and self.end is not None and not self.tampered

    @property
    def tampered(self) -> bool:
        """More than one ``episode_end``, or events after it: the file was written to afterwards."""
        return any(p.startswith(TAMPERED) for p in self.problems)


TAMPERED = "tampered"
"""Prefix of the problem recorded for a trajectory written to after its end."""


def parse_line(line: str) -> dict[str, Any]:
    """One JSONL line as a dict; refuses other schema versions with a clear error."""
    raw = json.loads(line)
    if not isinstance(raw, dict):
        raise ValueError("line is not a JSON object")
    version = raw.get("schema_version")
    if version != SCHEMA_VERSION:
        raise TrajectoryError(
            f"trajectory schema_version {version!r} is not supported (this coder_eval reads "
            f"{SCHEMA_VERSION}); re-run the episodes or use the coder_eval version that wrote them"
        )
    return raw


class RawLine(NamedTuple):
    """One line of a JSONL file as bytes go: its number (from 1), the byte offset where it starts, its
    text, and, when it is not UTF-8 (a write cut inside a character), the offset of the first bad byte."""

    number: int
    offset: int
    text: str
    bad_byte: int | None = None

    def problem(self, why: str = "") -> str:
        """How a reader names this line when it cannot be read: ``line 3: unreadable (not UTF-8 at
        byte 1207)``, ``line 3: unreadable (JSONDecodeError at byte 1180)``."""
        if self.bad_byte is not None:
            return f"line {self.number}: unreadable (not UTF-8 at byte {self.bad_byte})"
        return f"line {self.number}: unreadable ({why or 'not JSON'} at byte {self.offset})"


def raw_lines(data: bytes) -> Iterator[RawLine]:
    """The non-blank lines of ``data``, split on newlines only (text an agent wrote may hold U+2028 or
    other characters ``str.splitlines`` would split on); undecodable bytes never raise."""
    offset = 0
    for number, chunk in enumerate(data.split(b"\n"), start=1):
        start, offset = offset, offset + len(chunk) + 1
        if not chunk.strip():
            continue
        try:
            yield RawLine(number, start, chunk.decode("utf-8"))
        except UnicodeDecodeError as exc:
            yield RawLine(number, start, chunk.decode("utf-8", errors="replace"), start + exc.start)


def parsed_lines(path: Path, data: bytes, problems: list[str]) -> Iterator[tuple[int, dict[str, Any]]]:
    """Each readable line of ``data`` (the file at ``path``) as its number and JSON object; a line
    that cannot be read (cut by a crash, not JSON, not UTF-8) is named in ``problems`` and skipped.
    ``TrajectoryError`` for a line of another schema version."""
    for line in raw_lines(data):
        if line.bad_byte is not None:
            problems.append(line.problem())
            continue
        try:
            raw = parse_line(line.text)
        except TrajectoryError as exc:
            raise TrajectoryError(f"{path}:{line.number}: {exc}") from exc
        except (ValueError, RecursionError) as exc:  # JSONDecodeError is a ValueError: a cut line
            problems.append(line.problem(type(exc).__name__))
            continue
        yield line.number, raw


def read_trajectory(path: Path) -> Trajectory:
    """Read a trajectory, tolerating a truncated last line, undecodable bytes and a missing ``episode_end``.

    A line that cannot be read (cut by a crash, not JSON, not UTF-8) is named in ``problems`` with its
    byte offset and skipped. Raises ``TrajectoryError`` only when the file is of another schema version
    or cannot be read at all.
    """
    problems: list[str] = []
    events: list[Event] = []
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise TrajectoryError(f"{path}: cannot read trajectory: {exc}") from exc
    for number, raw in parsed_lines(path, data, problems):
        try:
            events.append(EVENT_ADAPTER.validate_python(raw))
        except ValidationError as exc:
            problems.append(f"line {number}: invalid event ({exc.error_count()} errors)")
    if not events or not isinstance(events[0], EpisodeStart):
        problems.append("no episode_start")
    ends = [i for i, e in enumerate(events) if isinstance(e, EpisodeEnd)]
    if len(ends) > 1 or (ends and ends[0] != len(events) - 1):
        problems.append(
            f"{TAMPERED}: {len(ends)} episode_end events, {len(events) - 1 - ends[0]} events after the first"
        )
    elif not ends:
        problems.append("no episode_end (interrupted)")
    return Trajectory(path, events, problems)
