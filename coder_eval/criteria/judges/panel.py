"""Model judges: the fields every judge has, and the panel that asks the model and counts its votes.

A judge asks a model ``votes`` times; each answer arrives only through a forced tool call and is
validated, a failed call is retried (at most ``max_retries`` times, with a short backoff), and a vote
that still fails makes the criterion raise ``GraderError``. The score is the mean of the vote
scores; the criterion passes when at least ``min_pass_votes`` votes pass.

``PanelSpec`` holds the fields of every panel (``agent_judge`` too); ``JudgeSpec`` adds the sampling
fields of judges called through the Messages API.

Example (YAML, the fields shared by ``llm_judge`` and ``baseline_judge``)::

    - type: llm_judge
      model: claude-sonnet-4-6          # or `scripted`, with a `scripted:` block (offline)
      votes: 3
      min_pass_votes: 2                 # default: a majority
      max_retries: 2
      temperature: 1.0
      max_tokens: 1024
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Coroutine, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

from pydantic import Field, model_validator

if TYPE_CHECKING:  # the client is imported when a judge runs: it is slow to import
    import anthropic
    from anthropic.types import Message as ApiMessage

from coder_eval.criteria.base import CriterionSpec, GradingContext, Verdict
from coder_eval.errors import GraderError
from coder_eval.pricing import cost_usd
from coder_eval.scripted.script import ScriptRef
from coder_eval.trajectory import Usage
from coder_eval.untrusted_json import visible_data

DEFAULT_MODEL = "claude-sonnet-4-6"
"""The judge model when none is given; also the name a scripted judge answers as."""
SCRIPTED = "scripted"
"""The model name that runs the judge against its own scripted server."""
RETRY_BACKOFF_S = 0.5
"""Seconds before the first retry of a failed judge call; doubled for each further retry."""
REQUEST_TIMEOUT_S = 120.0
"""Seconds one judge request may take."""
TRANSIENT_STATUS = frozenset({408, 409, 429})
"""HTTP statuses below 500 worth retrying; other 4xx (auth, bad request) fail at once."""


ANTHROPIC_KEYS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")
"""What the anthropic client authenticates with (either one)."""


class PanelSpec(CriterionSpec):
    """Fields every judge panel has, whatever runs the judge (``llm_judge`` and ``agent_judge`` pass a
    vote on its score, see ``threshold_votes``; ``baseline_judge`` on the comparison)."""

    model: str = Field(default=DEFAULT_MODEL, description="Judge model id, or 'scripted' (needs 'scripted').")
    scripted: ScriptRef = Field(
        default=None, description="Script for model 'scripted': inline, or a file relative to the task."
    )
    votes: int = Field(default=3, ge=1, le=25, description="Independent judge calls.")
    min_pass_votes: int | None = Field(
        default=None, ge=1, description="Passing votes needed (default: a majority)."
    )
    max_retries: int = Field(default=2, ge=0, le=5, description="Retries of a failed call, per vote.")

    @model_validator(mode="after")
    def _consistent(self) -> PanelSpec:
        if self.min_pass_votes is not None and self.min_pass_votes > self.votes:
            raise ValueError(f"min_pass_votes ({self.min_pass_votes}) exceeds votes ({self.votes})")
        if (self.model == SCRIPTED) != (self.scripted is not None):
            raise ValueError("give 'scripted' exactly when model is 'scripted'")
        return self

    def model_keys(self) -> tuple[str, ...]:
        return () if self.model == SCRIPTED else ANTHROPIC_KEYS

    @property
    def pass_votes_needed(self) -> int:
        return self.min_pass_votes if self.min_pass_votes is not None else self.votes // 2 + 1


class JudgeSpec(PanelSpec):
    """Fields every model judge called through the Messages API has (``llm_judge``, ``baseline_judge``)."""

    temperature: float | None = Field(default=None, ge=0, le=1, description="Sampling temperature.")
    max_tokens: int = Field(default=1024, ge=64, le=32_000, description="Output tokens per call.")


class Reading(NamedTuple):
    """One valid answer read from the judge's tool input; ``extra`` is kept in the vote record."""

    score: float
    passed: bool
    rationale: str
    extra: dict[str, Any]


@dataclass(frozen=True)
class Ballot:
    """What the judge is asked, the tool it must answer with, and how an answer is read.

    ``read`` gets the tool input and raises ``ValueError`` when it is not a valid answer.
    """

    system: str
    prompt: str
    tool: dict[str, Any]
    read: Callable[[dict[str, Any]], Reading]

    @property
    def tool_name(self) -> str:
        return str(self.tool["name"])


@dataclass(frozen=True)
class Endpoint:
    """Where the judge is served: ``base_url``/``api_key`` None means the anthropic client's defaults
    (``ANTHROPIC_BASE_URL``, ``ANTHROPIC_API_KEY``)."""

    model: str
    base_url: str | None = None
    api_key: str | None = None


@contextmanager
def endpoint_for(spec: JudgeSpec, ctx: GradingContext) -> Iterator[Endpoint]:
    """The configured model; for ``scripted``, a scripted server seeded from the episode, while open."""
    if spec.model != SCRIPTED:
        if not any(os.environ.get(name) for name in spec.model_keys()):
            raise GraderError(
                f"{spec.type} model {spec.model!r} needs ANTHROPIC_API_KEY in the environment "
                "(or use model: scripted with a 'scripted' block)"
            )
        yield Endpoint(spec.model)
        return
    from coder_eval.scripted import ScriptedServer, load_script

    script = load_script(spec.scripted or {}, base_dir=ctx.task_dir)
    with ScriptedServer(script, seed=ctx.seed) as server:
        yield Endpoint(script.model or DEFAULT_MODEL, server.base_url, "scripted")


async def run_panel(spec: JudgeSpec, ballot: Ballot, ctx: GradingContext) -> list[dict[str, Any]]:
    """Ask the judge ``spec.votes`` times, concurrently; every vote's record, in vote order."""
    import anthropic

    with endpoint_for(spec, ctx) as endpoint:
        client = anthropic.AsyncAnthropic(
            base_url=endpoint.base_url,
            api_key=endpoint.api_key,
            max_retries=0,
            timeout=REQUEST_TIMEOUT_S,
        )
        async with client:
            return await gather_votes(
                spec.votes, lambda number: _vote(client, endpoint.model, spec, ballot, number)
            )


async def gather_votes(
    count: int, vote: Callable[[int], Coroutine[Any, Any, dict[str, Any]]]
) -> list[dict[str, Any]]:
    """``vote(1)`` … ``vote(count)`` concurrently; their records in vote order.

    The first vote to raise ``GraderError`` cancels the others and its error is raised as is.
    """
    try:
        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(vote(number)) for number in range(1, count + 1)]
    except BaseExceptionGroup as failed:
        raise _first_grader_error(failed) from None
    return [task.result() for task in tasks]


def _first_grader_error(failed: BaseExceptionGroup[BaseException]) -> BaseException:
    grader_errors = failed.subgroup(GraderError)
    if grader_errors is None:
        return failed
    first = grader_errors.exceptions[0]
    return _first_grader_error(first) if isinstance(first, BaseExceptionGroup) else first


async def _vote(
    client: anthropic.AsyncAnthropic, model: str, spec: JudgeSpec, ballot: Ballot, number: int
) -> dict[str, Any]:
    """One vote: call, read the forced tool call, retry a failure; GraderError when all attempts fail."""
    import anthropic

    request = visible_data(_request(model, spec, ballot, number))  # the API takes valid Unicode only
    errors: list[str] = []
    usage = Usage()
    for attempt in range(1, spec.max_retries + 2):
        if attempt > 1:
            await asyncio.sleep(RETRY_BACKOFF_S * 2 ** (attempt - 2))
        try:
            response: ApiMessage = await client.messages.create(**request)
        except anthropic.APIError as exc:
            errors.append(f"{type(exc).__name__}: {exc}")
            if not _transient(exc):
                raise GraderError(f"judge vote {number}: {errors[-1]} (not retried)") from exc
            continue
        usage += _usage(response)
        model = response.model
        try:
            reading = ballot.read(_tool_input(response, ballot.tool_name))
        except ValueError as exc:
            errors.append(f"invalid answer: {exc}")
            continue
        return _record(number, reading, usage, model, attempt, errors)
    raise GraderError(f"judge vote {number}: {len(errors)} attempts failed; last: {errors[-1]}")


def _request(model: str, spec: JudgeSpec, ballot: Ballot, number: int) -> dict[str, Any]:
    """The Messages request of one vote; the vote number makes each vote its own conversation."""
    request: dict[str, Any] = {
        "model": model,
        "max_tokens": spec.max_tokens,
        "system": ballot.system,
        "messages": [{"role": "user", "content": f"{ballot.prompt}\n\n(vote {number} of {spec.votes})"}],
        "tools": [ballot.tool],
        "tool_choice": {"type": "tool", "name": ballot.tool_name},
    }
    if spec.temperature is not None:  # the client has no keyword for it: sent in the body as written
        request["extra_body"] = {"temperature": spec.temperature}
    return request


def _transient(exc: anthropic.APIError) -> bool:
    import anthropic

    if isinstance(exc, anthropic.APIStatusError):
        return exc.status_code >= 500 or exc.status_code in TRANSIENT_STATUS
    return True


def _usage(response: ApiMessage) -> Usage:
    used = response.usage
    return Usage(
        input_tokens=used.input_tokens,
        output_tokens=used.output_tokens,
        cache_read_tokens=used.cache_read_input_tokens or 0,
        cache_creation_tokens=used.cache_creation_input_tokens or 0,
    )


def _tool_input(response: ApiMessage, tool_name: str) -> dict[str, Any]:
    for block in response.content:
        if block.type == "tool_use" and block.name == tool_name:
            if not isinstance(block.input, dict):
                raise ValueError(f"{tool_name} input is not an object")
            return block.input
    raise ValueError(f"no {tool_name} tool call (stop_reason {response.stop_reason!r})")


def _record(
    number: int, reading: Reading, usage: Usage, model: str, attempts: int, errors: list[str]
) -> dict[str, Any]:
    return {
        "vote": number,
        "passed": reading.passed,
        "score": reading.score,
        "rationale": reading.rationale,
        **reading.extra,
        "input_tokens": usage.input_tokens + usage.cache_read_tokens + usage.cache_creation_tokens,
        "output_tokens": usage.output_tokens,
        "cost_usd": cost_usd(model, usage),
        "model": model,
        "attempts": attempts,
        "errors": errors,
    }


def threshold_votes(votes: list[dict[str, Any]], threshold: float) -> list[dict[str, Any]]:
    """Each vote passes when its score reaches ``threshold``; the judge's own answer is kept as
    ``judge_passed``.

    Example: a vote ``{"score": 0.8, "passed": False}`` with threshold 0.7 ->
    ``{"score": 0.8, "passed": True, "judge_passed": False}``.
    """
    return [{**v, "passed": float(v["score"]) >= threshold, "judge_passed": v["passed"]} for v in votes]


def panel_verdict(spec: PanelSpec, votes: list[dict[str, Any]], **details: Any) -> Verdict:
    """Score = mean vote score; passed = passing votes >= ``min_pass_votes``; judge totals in details.

    Example: three votes scoring 1, 1, 0 (two passing) -> ``Verdict(score=0.667, passed=True)``.
    """
    passing = sum(bool(v["passed"]) for v in votes)
    costs = [v["cost_usd"] for v in votes]
    return Verdict(
        score=sum(float(v["score"]) for v in votes) / len(votes),
        passed=passing >= spec.pass_votes_needed,
        details={
            **details,
            "judge_model": votes[0]["model"],
            "pass_votes": passing,
            "min_pass_votes": spec.pass_votes_needed,
            "judge_input_tokens": sum(int(v["input_tokens"]) for v in votes),
            "judge_output_tokens": sum(int(v["output_tokens"]) for v in votes),
            "judge_cost_usd": None if None in costs else sum(costs),
            "votes": votes,
        },
    )
