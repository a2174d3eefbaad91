"""``run.json``: the manifest of a run, typed, and its reader.

Example::

    manifest = read_manifest(Path("runs/latest"))   # ManifestError (exit 2) naming the file if damaged
    manifest.status, manifest.episodes[0].episode_id, manifest.resumes, manifest.gates

Schema version 2 gives every record its own field (``inputs``, ``experiment``, ``budget``, ``gates``,
``headline``); version 1 kept them under ``extra``, and a version-1 manifest reads as version 2
with them lifted out (``RunManifest._lift_extra``).
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from coder_eval.errors import ManifestError
from coder_eval.trajectory import now

MANIFEST = "run.json"
MANIFEST_SCHEMA_VERSION = 2
"""The manifest's own schema version (1: records under ``extra``; 2: a field each)."""
READABLE_VERSIONS = (1, MANIFEST_SCHEMA_VERSION)
LIFTED = ("inputs", "experiment", "budget", "gates", "headline")
"""The keys a version-1 manifest kept under ``extra``, each a field since version 2."""
RunStatus = Literal["running", "completed", "interrupted", "budget_stopped"]


class PlannedEpisode(BaseModel):
    """One planned episode in the manifest."""

    model_config = ConfigDict(extra="forbid")
    episode_id: str
    task_id: str
    variant_id: str
    repeat: int


class SnapshotTotals(BaseModel):
    """What a run keeps of its episodes' workspaces (``snapshots/``)."""

    model_config = ConfigDict(extra="forbid")
    kept: bool = Field(default=True, description="Workspace snapshots were kept (false: --no-snapshots).")
    max_mb: float | None = Field(default=None, description="The per-episode cap, MB (compressed).")
    count: int = Field(default=0, description="Snapshots in snapshots/.")
    bytes: int = Field(default=0, description="Their total size.")


class RegradeRecord(BaseModel):
    """How a run made by ``coder-eval regrade`` came about, and what changed."""

    model_config = ConfigDict(extra="forbid")
    run_id: str = Field(description="The run whose agent events were re-graded.")
    run_dir: str = Field(description="Its directory.")
    task_files: list[str] = Field(default_factory=list, description="Task files whose criteria were used.")
    episodes: int = Field(default=0, description="Episodes in the new run.")
    changed: int = Field(default=0, description="Episodes whose outcome changed.")
    outcomes_before: dict[str, int] = Field(default_factory=dict, description="Outcome counts before.")
    outcomes_after: dict[str, int] = Field(default_factory=dict, description="Outcome counts after.")
    criteria_kept: int = Field(
        default=0, description="Unchanged workspace criteria kept as recorded (the episode had no snapshot)."
    )
    criteria_not_regraded: int = Field(
        default=0, description="Workspace criteria left as errors: no snapshot, and the criterion changed."
    )
    evaluation_cost_usd: float | None = Field(
        default=None, description="What the model judges cost in this re-grade; null when a price is unknown."
    )
    seconds: float = Field(default=0.0, description="Wall time of the re-grade.")


class ReplayRecord(BaseModel):
    """How a run made by ``coder-eval replay`` came about: each episode's endpoint record run again
    through the real CLI on the scripted server, and what came out differently."""

    model_config = ConfigDict(extra="forbid")
    run_id: str = Field(description="The run whose endpoint records were replayed.")
    run_dir: str = Field(description="Its directory.")
    episodes: int = Field(default=0, description="Episodes replayed.")
    same: int = Field(default=0, description="Replayed with the same tool calls, grades and outcome.")
    differing: dict[str, list[str]] = Field(
        default_factory=dict, description="Episode id -> what differed (the first differences)."
    )
    skipped: dict[str, str] = Field(
        default_factory=dict, description="Episode id -> why it was not replayed."
    )


class ResumeRecord(BaseModel):
    """One ``--resume`` of the run: what it kept, and what it ran again, and why."""

    model_config = ConfigDict(extra="forbid")
    at: datetime = Field(default_factory=now, description="When the resume began (UTC).")
    kept: int = Field(default=0, description="Finished episodes kept as they were.")
    unfinished: list[str] = Field(default_factory=list, description="Interrupted or never started: run.")
    harness_invalid: list[str] = Field(
        default_factory=list, description="Invalid by the harness's fault (invalid_cause harness): run again."
    )
    retried_invalid: list[str] = Field(
        default_factory=list, description="Other invalid episodes, run again because --retry-invalid asked."
    )
    replanned: list[str] = Field(
        default_factory=list,
        description="Finished with a task that has changed since, run again because --replan asked.",
    )


class InputsRecord(BaseModel):
    """The selection options a run started with (``--resume`` rebuilds its plan from them): paths
    and the experiment stored absolute (``coder_eval.experiment.inputs.RunInputs`` acts on them)."""

    model_config = ConfigDict(extra="ignore")
    paths: list[str] = []
    experiment: str | None = None
    defines: list[str] = []
    model: str | None = None
    agent: str | None = None
    repeats: int | None = None
    tags: list[str] = []
    sample: int | None = None
    sample_per_stratum: int | None = None
    sample_tasks: int | None = None
    split: str | None = None
    exclude_tags: list[str] = []
    include_skipped: bool = False
    driver: str | None = None

    @field_validator("paths", "defines", "tags", "exclude_tags", mode="before")
    @classmethod
    def _none_is_empty(cls, value: Any) -> Any:
        return [] if value is None else value


class VariantRecord(BaseModel):
    """One variant as it resolved over the run's tasks."""

    variant_id: str
    description: str = ""
    repeats: int = 1
    agents: list[str] = Field(default_factory=list, description="Agent kinds its episodes ran.")
    models: list[str] = Field(default_factory=list, description="Models (``default`` when unset).")


class CompareRecord(BaseModel):
    """The experiment's ``compare:`` block: which tasks the headline pools."""

    tags: list[str] = Field(default_factory=list)
    exclude_tags: list[str] = Field(default_factory=list)


class ExperimentRecord(BaseModel):
    """The experiment file and, per variant, what it resolved to."""

    path: str | None = Field(default=None, description="The experiment file (absolute), or null.")
    variants: list[VariantRecord] = Field(default_factory=list)
    compare: CompareRecord = Field(default_factory=CompareRecord)


class BudgetRecord(BaseModel):
    """A ``--max-cost-usd`` budget and what the run spent under it."""

    max_cost_usd: float
    spent_usd: float = 0.0
    stopped: bool = Field(default=False, description="The budget stopped the run.")
    not_started: int = Field(default=0, description="Episodes never started because of it.")


class GateRecord(BaseModel):
    """One row of the gate table (``coder_eval.run.gates.GateResult``; null where a value is not a number)."""

    gate: str
    variant_id: str
    metric: str
    threshold: float | None = None
    value: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    label: str | None = None
    verdict: Literal["pass", "fail", "not gated"] = "fail"
    note: str = ""


# --- until conclusive: the rule a run declares, and the confidence sequence it recorded ---------------

DECISION_METRICS = ("passed", "score", "cost_usd", "total_tokens", "duration_s", "num_turns")
"""The metrics ``--until-conclusive`` can decide on (pass rates and scores as they are; amounts by
the per-task log ratio, capped at ``ratio_cap`` either way)."""


class UntilConclusiveRule(BaseModel):
    """The rule of a run that stops at its answer (``run --until-conclusive``, or an experiment's
    ``until_conclusive:`` block), declared before the first result."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    baseline: str | None = Field(default=None, description="The baseline arm (default: as the headline).")
    candidate: str | None = Field(default=None, description="The candidate arm (default: as the headline).")
    metrics: list[str] = Field(
        default_factory=lambda: ["passed"],
        min_length=1,
        description="Decision metrics, the primary first (several share alpha by e-Bonferroni).",
    )
    delta: float = Field(
        default=0.2, gt=0, lt=1, description="The smallest difference that matters (20 points: 0.2)."
    )
    alpha: float = Field(default=0.05, gt=0, lt=1, description="Error rate, at every look.")
    ratio_cap: float = Field(
        default=4.0,
        gt=1,
        description="Amounts: a task's candidate / baseline ratio counts at most this far either way.",
    )
    max_tasks: int | None = Field(default=None, ge=1, description="At most this many tasks (default all).")
    max_episodes: int | None = Field(default=None, ge=1, description="At most this many episodes.")
    max_cost_usd: float | None = Field(
        default=None, ge=0, description="Stop launching episodes at this spend (as --max-cost-usd)."
    )
    seed: int | None = Field(
        default=None, ge=0, description="Seed of the task order (default: drawn afresh, and recorded)."
    )

    @field_validator("metrics")
    @classmethod
    def _known_metrics(cls, metrics: list[str]) -> list[str]:
        from coder_eval.errors import did_you_mean

        for metric in metrics:
            if metric not in DECISION_METRICS:
                raise ValueError(
                    f"metric {metric!r} cannot decide{did_you_mean(metric, DECISION_METRICS)}; "
                    f"choose from {', '.join(DECISION_METRICS)}"
                )
        if len(set(metrics)) != len(metrics):
            raise ValueError(f"metrics repeat: {metrics}")
        return metrics


class SequenceLook(BaseModel):
    """One look: the task just completed, its observation in [-1, 1], the interval after it."""

    task_id: str
    value: float
    low: float
    high: float


class SequencePath(BaseModel):
    """One decision metric's confidence sequence over the tasks, in the recorded order."""

    metric: str
    looks: list[SequenceLook] = Field(default_factory=list)
    decision: Literal["better", "worse", "no_effect"] | None = None


Stop = Literal["decided", "max_tasks", "all_tasks", "max_episodes", "max_cost_usd", "blocked", "regraded"]
"""Why a run ``--until-conclusive`` stopped (``regraded``: it had stopped at a decision its regraded
verdicts do not reach, with tasks left that never ran)."""


class AdaptiveRecord(BaseModel):
    """What ``--until-conclusive`` drew, saw and decided (``run.json``'s ``adaptive``)."""

    rule: UntilConclusiveRule
    baseline: str
    candidate: str
    seed: int = Field(description="Seed of the task order.")
    order: list[str] = Field(description="Every task, in the order drawn before the first result.")
    max_tasks: int = Field(description="The task cap the rule resolved to.")
    episodes_per_task: int = Field(description="Episodes of one task (every arm and repeat).")
    paths: list[SequencePath] = Field(default_factory=list)
    decision: Literal["better", "worse", "no_effect", "inconclusive"] | None = Field(
        default=None, description="The primary metric's; null while the run goes on."
    )
    stop: Stop | None = None
    stopped_at: str | None = Field(default=None, description="The last task that counted.")
    decided_tasks: int = 0
    in_flight: list[str] = Field(
        default_factory=list, description="Tasks run when it stopped that do not count (kept)."
    )
    blocked: str | None = Field(
        default=None,
        description="The task that could not count: episodes that stayed invalid, a value unknown.",
    )
    reason: str = Field(default="", description="The stopping reason in words.")


class SourceRecord(BaseModel):
    """Where the suite came from (``coder_eval.run.provenance``): null fields when unknown."""

    git_commit: str | None = Field(default=None, description="HEAD of the suite's git work tree.")
    git_branch: str | None = Field(
        default=None, description="Its branch (CI's, when CI names one); --baseline latest-on-BRANCH."
    )
    git_dirty: bool = Field(default=False, description="Tracked files of the suite had uncommitted changes.")


class RunManifest(BaseModel):
    """``run.json``: what a run was asked to do, and how far it got."""

    model_config = ConfigDict(extra="forbid")
    schema_version: int = Field(default=MANIFEST_SCHEMA_VERSION, description="The manifest's schema.")
    run_id: str = Field(description="Directory name under runs/.")
    experiment_id: str = Field(default="default", description="Experiment that produced the run.")
    description: str = Field(default="", description="Experiment description.")
    created_at: datetime = Field(default_factory=now, description="When the run was created (UTC).")
    updated_at: datetime = Field(default_factory=now, description="Last manifest update (UTC).")
    status: RunStatus = Field(default="running", description="running, completed, interrupted, ...")
    command: list[str] = Field(default_factory=list, description="The command line that started it.")
    variants: list[str] = Field(default_factory=list, description="Variant ids, in experiment order.")
    tasks: list[str] = Field(default_factory=list, description="Task ids.")
    repeats: int = Field(default=1, description="Repeats per task and variant (the most any variant has).")
    episodes: list[PlannedEpisode] = Field(default_factory=list, description="Every planned episode.")
    versions: dict[str, str] = Field(default_factory=dict, description="coder_eval and Python versions.")
    snapshots: SnapshotTotals | None = Field(default=None, description="Kept workspace snapshots.")
    regraded_from: RegradeRecord | None = Field(
        default=None, description="Set on a run made by coder-eval regrade."
    )
    replayed_from: ReplayRecord | None = Field(
        default=None, description="Set on a run made by coder-eval replay."
    )
    resumes: list[ResumeRecord] = Field(default_factory=list, description="Each --resume, in order.")
    inputs: InputsRecord | None = Field(default=None, description="The selection options it started with.")
    experiment: ExperimentRecord | None = Field(default=None, description="What the experiment resolved to.")
    budget: BudgetRecord | None = Field(default=None, description="Set when the run had a cost budget.")
    gates: list[GateRecord] | None = Field(default=None, description="Set once the gates were evaluated.")
    source: SourceRecord | None = Field(default=None, description="The suite's git commit and branch.")
    task_hashes: dict[str, str] = Field(
        default_factory=dict,
        description="Task id -> content hash of its task file and the files it names (baselines pair on it).",
    )
    headline: dict[str, Any] | None = Field(
        default=None,
        description="The declared comparison as plain data (``Verdicts.headline()``), with two variants.",
    )
    adaptive: AdaptiveRecord | None = Field(
        default=None, description="Set on a run that stops at its answer (--until-conclusive)."
    )
    extra: dict[str, Any] = Field(
        default_factory=dict, description="Notes; nothing coder_eval reads (it reads only the fields above)."
    )

    @model_validator(mode="before")
    @classmethod
    def _lift_extra(cls, data: Any) -> Any:
        """A version-1 manifest (records under ``extra``) read as version 2: each record lifted into
        its field, unless the field is set too."""
        if not isinstance(data, dict):
            return data
        lifted: dict[str, Any] = {}
        if isinstance(data.get("extra"), dict):
            extra = dict(data["extra"])
            lifted = {key: extra.pop(key) for key in LIFTED if key in extra and data.get(key) is None}
            lifted["extra"] = extra
        if data.get("schema_version") != 1 and len(lifted) <= 1:
            return data
        return {**data, **lifted, "schema_version": MANIFEST_SCHEMA_VERSION}


def read_manifest(folder: Path) -> RunManifest:
    """``folder/run.json`` as a manifest; ``ManifestError`` (exit 2) naming the file when it is not
    UTF-8, not JSON, not a coder_eval manifest, or of another schema version."""
    path = folder / MANIFEST
    try:
        data = json.loads(path.read_bytes().decode("utf-8"))
    except OSError as exc:
        raise ManifestError(f"{path}: cannot read the run's manifest: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise ManifestError(f"{path}: not UTF-8 text (byte {exc.start}); not a coder_eval manifest") from exc
    except (ValueError, RecursionError) as exc:
        raise ManifestError(f"{path}: not JSON ({exc}); not a coder_eval manifest") from exc
    if not isinstance(data, dict) or "run_id" not in data:
        raise ManifestError(f"{path}: not a coder_eval run manifest (no run_id)")
    version = data.get("schema_version", MANIFEST_SCHEMA_VERSION)
    if type(version) is not int or version not in READABLE_VERSIONS:
        raise ManifestError(
            f"{path}: manifest schema_version {version!r} is not supported (this coder_eval reads "
            f"{' and '.join(map(str, READABLE_VERSIONS))}); use the coder_eval version that wrote the run"
        )
    try:
        return RunManifest.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(map(str, first["loc"])) or "(top level)"
        raise ManifestError(f"{path}: not a coder_eval run manifest: {where}: {first['msg']}") from exc
