"""``run_limits``: how long and how much one episode may take.

Example::

    run_limits:
      task_timeout: 600          # the whole agent run, seconds
      turn_timeout: 120          # one agent turn: the longest gap between two things the agent does
      max_turns: 30
      max_tool_calls: 50
      max_total_tokens: 400000   # budgets are checked after each turn
      max_usd: 2.5
      expected_turns: 12         # soft: noted when exceeded, never stops the run

A budget or limit that is reached ends the episode with a status that says which (``timeout``,
``max_turns``, ``max_tool_calls``, ``budget_exceeded``), and the agent's failure, never ``invalid``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:
    from coder_eval.trajectory import Usage


class RunLimits(BaseModel):
    """Per-episode limits (see the module docstring)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    max_turns: int | None = Field(default=None, ge=1, description="Agent turns.")
    task_timeout: float = Field(default=600.0, gt=0, description="Seconds for the agent's whole run.")
    turn_timeout: float | None = Field(
        default=None, gt=0, description="Seconds one turn may take: the longest the agent may go silent."
    )
    max_input_tokens: int | None = Field(default=None, ge=1, description="Input token budget.")
    max_output_tokens: int | None = Field(default=None, ge=1, description="Output token budget.")
    max_total_tokens: int | None = Field(default=None, ge=1, description="Token budget (counted buckets).")
    max_usd: float | None = Field(default=None, gt=0, description="Dollar budget.")
    count_cached_input: bool = Field(
        default=True, description="Cache reads count towards the input and total token budgets."
    )
    count_cache_creation: bool = Field(
        default=True, description="Cache writes count towards the input and total token budgets."
    )
    max_tool_calls: int | None = Field(default=None, ge=1, description="Tool calls the agent may make.")
    expected_turns: int | None = Field(default=None, ge=1, description="Soft: noted when exceeded.")
    stop_early: bool = Field(
        default=True, description="false: criteria armed with stop_early never end the run early."
    )
    stop_early_gate_threshold: float = Field(
        default=1.0,
        ge=0,
        le=1,
        description="Share of armed criteria that must pass for an early stop to pass.",
    )


def token_overrun(limits: RunLimits, used: Usage) -> str | None:
    """Which token budget ``used`` exceeds, counted as the limits say (cache reads and writes count
    toward input and total unless ``count_cached_input`` / ``count_cache_creation`` are false).

    Example: ``token_overrun(RunLimits(max_total_tokens=5000), usage)`` -> ``"used 5310 tokens >
    max_total_tokens 5000"``, or None.
    """
    cached = used.cache_read_tokens if limits.count_cached_input else 0
    created = used.cache_creation_tokens if limits.count_cache_creation else 0
    inputs = used.input_tokens + cached + created
    checks = (
        ("max_input_tokens", limits.max_input_tokens, inputs),
        ("max_output_tokens", limits.max_output_tokens, used.output_tokens),
        ("max_total_tokens", limits.max_total_tokens, inputs + used.output_tokens),
    )
    for name, limit, count in checks:
        if limit is not None and count > limit:
            return f"used {count} tokens > {name} {limit}"
    return None
