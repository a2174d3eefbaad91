"""Inspect AI eval logs -> the analysis frames: one episode per sample and epoch.

Logs are read with inspect_ai's own log API (``pip install 'coder-eval-toolkit[inspect]'``), so both of its
formats (``.eval`` and ``.json``) and every log version it reads load here. ``load_runs`` calls this
for any ``.eval`` or ``.json`` path, and for a folder holding Inspect logs but no trajectories.

Example::

    from coder_eval.analysis import load_runs
    runs = load_runs("logs/", inspect_variant="model")     # a sample is a task, an epoch a repeat
    runs.episodes.groupby("variant_id").passed.mean()

The mapping (what each column is read from) is in ``docs/interop.md``.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, get_args

from coder_eval.analysis.frames.columns import (
    CRITERIA,
    EPISODES,
    KEYS,
    MESSAGES,
    TEXT_LIMIT,
    TOOL_CALLS,
    Column,
    names,
)
from coder_eval.analysis.frames.rows import ParsedEpisode, Row
from coder_eval.errors import AnalysisError, unknown_name
from coder_eval.interop.log_readers.inspect_files import INSTALL_HINT
from coder_eval.interop.log_readers.inspect_scores import ScoreRead, read_scores, sample_verdict
from coder_eval.run_dir import episode_id
from coder_eval.transcript import input_summary

if TYPE_CHECKING:
    from inspect_ai.log import EvalLog, EvalSample
    from inspect_ai.model import ModelUsage

InspectVariant = Literal["model", "solver", "model+solver", "task"]
"""What becomes ``variant_id``: the log's model, its solver, both, or its task name."""
MOCK_MODEL = "mockllm/"
"""Inspect's mock model provider: its episodes are marked ``scripted``."""
_BUCKETS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_creation_tokens")
_NAN = float("nan")


def inspect_episodes(path: Path, variant: InspectVariant = "model") -> list[ParsedEpisode]:
    """Every sample and epoch of an Inspect log, each as the frame rows of one episode.

    Example: ``inspect_episodes(Path("logs/x.eval"))[0].episode["task_id"]`` -> ``'arith/1'``
    """
    if variant not in get_args(InspectVariant):
        raise AnalysisError(unknown_name("inspect_variant", variant, get_args(InspectVariant)))
    log = read_log(path)
    if log.status != "success":
        why = f" ({log.error.message})" if log.error else ""
        warnings.warn(
            f"{path}: the Inspect log has status {log.status!r}{why}; its "
            f"{len(log.samples or [])} recorded samples are loaded",
            stacklevel=2,
        )
    info = LogInfo.of(log, path, variant)
    return [sample_episode(info, sample) for sample in log.samples or []]


def read_log(path: Path) -> EvalLog:
    """The whole log, attachments resolved; AnalysisError when inspect_ai is missing or it is no log."""
    try:
        from inspect_ai.log import read_eval_log
    except ImportError as exc:
        raise AnalysisError(f"{path}: reading Inspect AI logs needs inspect_ai: {INSTALL_HINT}") from exc
    try:
        return read_eval_log(str(path), resolve_attachments="core")
    except Exception as exc:  # the log API raises zip, JSON and validation errors alike
        raise AnalysisError(
            f"{path}: not a readable Inspect AI eval log ({type(exc).__name__}: {exc})"
        ) from exc


@dataclass(frozen=True)
class LogInfo:
    """What every episode of one log shares."""

    path: Path
    run_id: str
    task: str
    model: str
    solver: str
    tags: tuple[str, ...]
    variant: InspectVariant
    scorers: Mapping[str, str]
    """Score name -> the scorer that produced it (``match``, ``model_graded_qa``, ...)."""

    @classmethod
    def of(cls, log: EvalLog, path: Path, variant: InspectVariant) -> LogInfo:
        steps = [step.solver for step in log.plan.steps]
        return cls(
            path=path,
            run_id=log.eval.run_id,
            task=log.eval.task,
            model=log.eval.model,
            solver=log.eval.solver or "+".join(steps) or "none",
            tags=tuple(log.eval.tags or ()),
            variant=variant,
            scorers={s.name: s.scorer for s in log.results.scores} if log.results else {},
        )

    @property
    def variant_id(self) -> str:
        if self.variant == "model+solver":
            return f"{self.model}+{self.solver}"
        return {"model": self.model, "solver": self.solver, "task": self.task}[self.variant]

    def keys(self, sample: EvalSample) -> Row:
        """(run_id, episode_id, task_id, variant_id, repeat) of one sample and epoch."""
        task_id = str(sample.id) if self.variant == "task" else f"{self.task}/{sample.id}"
        repeat = sample.epoch - 1
        return (self.run_id, episode_id(task_id, self.variant_id, repeat), task_id, self.variant_id, repeat)


def sample_episode(info: LogInfo, sample: EvalSample) -> ParsedEpisode:
    """The frame rows of one sample and epoch."""
    keys = info.keys(sample)
    scores = read_scores(sample, info.scorers)
    calls = tool_call_rows(keys, sample)
    values = episode_values(info, sample, scores, len(calls))
    return ParsedEpisode(
        episode=dict(zip(names(EPISODES), record(EPISODES, keys, values), strict=True)),
        criteria=[criterion_row(keys, values["outcome"], score) for score in scores],
        tool_calls=calls,
        messages=message_rows(keys, sample),
        problems=[],
    )


def record(columns: tuple[Column, ...], keys: Row, values: Mapping[str, Any]) -> Row:
    """A row in declared column order; a column this importer has no source for stays empty."""
    named = dict(zip(names(KEYS), keys, strict=True)) | dict(values)
    return tuple(named.get(c.name) for c in columns)


def episode_values(
    info: LogInfo, sample: EvalSample, scores: list[ScoreRead], n_calls: int
) -> dict[str, Any]:
    """The episodes-frame values of one sample (see ``docs/interop.md``)."""
    verdict = sample_verdict(sample, scores)
    return dict(
        verdict._asdict(),
        duration_s=_float(sample.total_time),
        agent_s=_float(sample.working_time),
        num_turns=sum(m.role == "assistant" for m in sample.messages),
        n_tool_calls=n_calls,
        model=info.model,
        agent=info.solver,
        tags=list(info.tags),
        scripted=info.model.startswith(MOCK_MODEL),
        prompt=sample.input if isinstance(sample.input, str) else first_user_text(sample.input),
        path=str(info.path),
        **usage_totals(sample.model_usage),
    )


def criterion_row(keys: Row, outcome: str, score: ScoreRead) -> Row:
    """A criteria-frame row for one score value; one that reads as no number records an error."""
    return record(
        CRITERIA,
        keys,
        dict(
            outcome=outcome,
            criterion_id=score.name,
            kind=score.scorer,
            description="",
            score=_NAN if score.value is None else score.value,
            passed=score.value is not None and score.value >= 1.0,
            gating=True,
            weight=1.0,
            error=None if score.value is not None else "the score has no value",
            details=score.details,
        ),
    )


def usage_totals(usage: Mapping[str, ModelUsage]) -> dict[str, float]:
    """Token buckets and cost summed over every model the sample called; cost NaN unless all priced."""
    buckets = [tokens_of(u) for u in usage.values()]
    totals = {name: float(sum(b[name] for b in buckets)) for name in _BUCKETS}
    costs = [u.total_cost for u in usage.values()]
    priced = bool(costs) and all(c is not None for c in costs)
    return dict(
        totals, total_tokens=sum(totals.values()), cost_usd=sum(c or 0.0 for c in costs) if priced else _NAN
    )


def tokens_of(usage: ModelUsage | None) -> dict[str, float]:
    """Inspect's usage in coder_eval's four buckets (its ``input_tokens`` are already uncached)."""
    if usage is None:
        return dict.fromkeys(_BUCKETS, _NAN)
    return dict(
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cache_read_tokens=usage.input_tokens_cache_read or 0,
        cache_creation_tokens=usage.input_tokens_cache_write or 0,
    )


def tool_call_rows(keys: Row, sample: EvalSample) -> list[Row]:
    """Every tool call of the assistant messages, joined to its tool message and its tool event."""
    from inspect_ai.event import ToolEvent
    from inspect_ai.model import ChatMessageAssistant, ChatMessageTool

    results = {m.tool_call_id: m for m in sample.messages if isinstance(m, ChatMessageTool)}
    durations = {e.id: e.working_time for e in sample.events if isinstance(e, ToolEvent)}
    assistant = [m for m in sample.messages if isinstance(m, ChatMessageAssistant)]
    rows: list[Row] = []
    for message in assistant:
        for call in message.tool_calls or []:
            result = results.get(call.id)
            values = dict(
                order=len(rows),
                id=call.id,
                name=call.function,
                input_summary=input_summary(call.arguments),
                is_error=None if result is None else result.error is not None,
                duration_s=durations.get(call.id),
            )
            rows.append(record(TOOL_CALLS, keys, values))
    return rows


def message_rows(keys: Row, sample: EvalSample) -> list[Row]:
    """System, user and assistant messages (tool messages are the tool calls' results), with each
    assistant message's usage from the model event that produced it."""
    from inspect_ai.event import ModelEvent

    usage = {
        e.output.message.id: e.output.usage
        for e in sample.events
        if isinstance(e, ModelEvent) and e.output.choices and e.output.message.id
    }
    rows: list[Row] = []
    for message in sample.messages:
        if message.role == "tool":
            continue
        calls = getattr(message, "tool_calls", None) or []
        blocks = (1 if message.content else 0) if isinstance(message.content, str) else len(message.content)
        values = dict(
            order=len(rows),
            role=message.role,
            model=getattr(message, "model", None),
            simulated=False,
            n_blocks=blocks + len(calls),
            text=message.text[:TEXT_LIMIT],
            **tokens_of(usage.get(message.id or "")),
        )
        rows.append(record(MESSAGES, keys, values))
    return rows


def first_user_text(messages: list[Any]) -> str | None:
    """The text of the first user message of a sample's input, if any."""
    return next((str(m.text) for m in messages if m.role == "user"), None)


def _float(value: float | None) -> float:
    return _NAN if value is None else float(value)
