"""The Agent Trajectory Interchange Format (ATIF) document, as pydantic models.

The part of ATIF v1.7 that coder_eval writes: steps with messages, reasoning, tool calls and their
observations, per-step token metrics, final metrics, and sub-agents as embedded trajectories. Like
the format's reference models, every model refuses unknown fields, so a document that validates here
has only ATIF's own fields.

Example::

    doc = AtifTrajectory(
        session_id="run1/hello--default--r0",
        agent=AtifAgent(name="claude-code", version="2.1.0"),
        steps=[AtifStep(step_id=1, source="user", message="Say hello.")],
    )
    doc.model_dump_json(exclude_none=True)
"""

from __future__ import annotations

from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

ATIF_VERSION: Final = "ATIF-v1.7"
"""The ATIF version written: the first with ``llm_call_count`` and embedded sub-agent trajectories."""


class _Atif(BaseModel):
    model_config = ConfigDict(extra="forbid")


class AtifToolCall(_Atif):
    """One tool call of an agent step."""

    tool_call_id: str = Field(description="Tool-use id; observation results point at it.")
    function_name: str = Field(description="Tool name.")
    arguments: dict[str, Any] = Field(description="Tool input as given.")
    extra: dict[str, Any] | None = Field(default=None, description="Tool-call metadata.")


class AtifSubagentRef(_Atif):
    """Where a delegated sub-agent's trajectory is: an embedded one, by id."""

    trajectory_id: str = Field(description="The sub-agent trajectory's ``trajectory_id``.")


class AtifObservationResult(_Atif):
    """The result of one tool call (or of an action without a call, when ``source_call_id`` is null)."""

    source_call_id: str | None = Field(default=None, description="The tool call this answers.")
    content: str | None = Field(default=None, description="The tool's output.")
    subagent_trajectory_ref: list[AtifSubagentRef] | None = Field(
        default=None, description="Sub-agent trajectories the call delegated to."
    )
    extra: dict[str, Any] | None = Field(default=None, description="Result metadata (is_error, ...).")


class AtifObservation(_Atif):
    """What the environment returned to a step."""

    results: list[AtifObservationResult] = Field(description="One result per tool call answered.")


class AtifMetrics(_Atif):
    """Token counts of one model call."""

    prompt_tokens: int | None = Field(default=None, description="Input tokens, cached ones included.")
    completion_tokens: int | None = Field(default=None, description="Output tokens.")
    cached_tokens: int | None = Field(default=None, description="Input tokens read from the cache.")
    cost_usd: float | None = Field(default=None, description="Cost of the call in USD.")
    extra: dict[str, Any] | None = Field(default=None, description="Other counts (cache writes, ...).")


class AtifStep(_Atif):
    """One step: a user, system or agent turn."""

    step_id: int = Field(ge=1, description="Position in the trajectory, from 1.")
    timestamp: str | None = Field(default=None, description="When it happened (ISO 8601).")
    source: Literal["system", "user", "agent"] = Field(description="Who produced it.")
    model_name: str | None = Field(default=None, description="Model of an agent step.")
    message: str = Field(description="The text of the turn.")
    reasoning_content: str | None = Field(default=None, description="The agent's thinking.")
    tool_calls: list[AtifToolCall] | None = Field(default=None, description="Tools the agent called.")
    observation: AtifObservation | None = Field(default=None, description="The tools' results.")
    metrics: AtifMetrics | None = Field(default=None, description="Token counts of the model call.")
    llm_call_count: int | None = Field(default=None, ge=0, description="Model calls the step stands for.")
    extra: dict[str, Any] | None = Field(default=None, description="Step metadata.")

    @model_validator(mode="after")
    def _agent_fields_on_agent_steps(self) -> AtifStep:
        agent_only = ("model_name", "reasoning_content", "tool_calls", "metrics")
        misplaced = [name for name in agent_only if getattr(self, name) is not None]
        if self.source != "agent" and misplaced:
            raise ValueError(f"step {self.step_id}: {', '.join(misplaced)} only belong on agent steps")
        return self


class AtifAgent(_Atif):
    """The agent that produced the trajectory."""

    name: str = Field(description="Agent system (claude-code, command, ...).")
    version: str = Field(description="Its version.")
    model_name: str | None = Field(default=None, description="Default model of the trajectory.")
    extra: dict[str, Any] | None = Field(default=None, description="Agent configuration.")


class AtifFinalMetrics(_Atif):
    """Totals of the whole trajectory."""

    total_prompt_tokens: int | None = Field(default=None, description="Input tokens, cached included.")
    total_completion_tokens: int | None = Field(default=None, description="Output tokens.")
    total_cached_tokens: int | None = Field(default=None, description="Cache-read input tokens.")
    total_cost_usd: float | None = Field(default=None, description="Cost in USD, sub-agents included.")
    total_steps: int | None = Field(default=None, ge=0, description="Steps of this trajectory.")
    extra: dict[str, Any] | None = Field(default=None, description="Other totals.")


class AtifTrajectory(_Atif):
    """One ATIF document (or a sub-agent trajectory embedded in one)."""

    schema_version: Literal["ATIF-v1.7"] = Field(default=ATIF_VERSION, description="ATIF version.")
    session_id: str | None = Field(default=None, description="The agent run it belongs to.")
    trajectory_id: str | None = Field(default=None, description="Unique id of this document.")
    agent: AtifAgent = Field(description="The agent.")
    steps: list[AtifStep] = Field(min_length=1, description="Every step, in order.")
    notes: str | None = Field(default=None, description="How the document was made.")
    final_metrics: AtifFinalMetrics | None = Field(default=None, description="Totals.")
    extra: dict[str, Any] | None = Field(default=None, description="Root metadata.")
    subagent_trajectories: list[AtifTrajectory] | None = Field(
        default=None, description="Embedded sub-agent trajectories, each with a unique trajectory_id."
    )

    @model_validator(mode="after")
    def _steps_and_references_hold(self) -> AtifTrajectory:
        for number, step in enumerate(self.steps, start=1):
            if step.step_id != number:
                raise ValueError(f"steps[{number - 1}].step_id is {step.step_id}, expected {number}")
            calls = {call.tool_call_id for call in step.tool_calls or []}
            results = step.observation.results if step.observation else []
            unknown = [r.source_call_id for r in results if r.source_call_id not in (None, *calls)]
            if unknown:
                raise ValueError(f"step {number}: results for calls it did not make: {unknown}")
        embedded = [sub.trajectory_id for sub in self.subagent_trajectories or []]
        if None in embedded or len(set(embedded)) != len(embedded):
            raise ValueError("embedded sub-agent trajectories need unique trajectory_ids")
        return self
