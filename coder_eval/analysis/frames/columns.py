"""The columns of the four analysis frames, declared as data (name, dtype, meaning).

Example::

    from coder_eval.analysis.frames.columns import EPISODES
    [c.name for c in EPISODES][:3]   # ['run_id', 'episode_id', 'task_id']
"""

from __future__ import annotations

from typing import NamedTuple


class Column(NamedTuple):
    """One declared column: its name, pandas dtype and meaning."""

    name: str
    dtype: str
    doc: str


KEYS = (
    Column("run_id", "str", "Run the episode belongs to."),
    Column("episode_id", "str", "Deterministic id <task_id>--<variant_id>--r<repeat>."),
    Column("task_id", "str", "Task id: the unit of analysis."),
    Column("variant_id", "str", "Experiment variant."),
    Column("repeat", "int64", "Repeat index, from 0."),
)

EPISODES = (
    *KEYS,
    Column("outcome", "str", "pass / fail / invalid (invalid: the agent was not measured)."),
    Column("status", "str", "How the episode ended (completed, timeout, interrupted, ...)."),
    Column("passed", "boolean", "outcome == 'pass'; <NA> for invalid episodes."),
    Column("score", "float64", "Weighted mean of criterion scores, in [0, 1]."),
    Column("duration_s", "float64", "Wall time of the whole episode, seconds."),
    Column("agent_s", "float64", "Seconds spent in the agent's run."),
    Column("input_tokens", "float64", "Uncached input tokens."),
    Column("output_tokens", "float64", "Output tokens."),
    Column("cache_read_tokens", "float64", "Input tokens read from the prompt cache."),
    Column("cache_creation_tokens", "float64", "Input tokens written to the prompt cache."),
    Column("total_tokens", "float64", "Sum of the four token buckets."),
    Column("cost_usd", "float64", "Agent cost in USD; NaN when the price is unknown."),
    Column("num_turns", "float64", "Agent turns."),
    Column("n_tool_calls", "int64", "Tool calls in the trajectory (sub-agents included)."),
    Column("model", "str", "Model of the first assistant message, else the agent block's model."),
    Column("agent", "str", "Agent kind from the resolved agent block."),
    Column("tags", "object", "Task tags (a list)."),
    Column("error", "str", "Why the episode is invalid or ended early; None otherwise."),
    Column(
        "invalid_cause",
        "str",
        "Why an invalid episode measured nothing, on the harness's evidence: harness, provider or grader "
        "(older files may say agent); None when valid or not recorded.",
    ),
    Column(
        "record_source",
        "str",
        "Where tool calls, usage and cost come from: scripted, proxy (the model endpoint's record) or "
        "agent (the agent CLI's own account, unverified); None in older files.",
    ),
    Column(
        "record_verified",
        "boolean",
        "Checked against the endpoint's record in a sandbox that is a boundary; <NA> in older files.",
    ),
    Column("n_unverified", "float64", "Events of the agent's stream with no counterpart at the endpoint."),
    Column("scripted", "bool", "True when the model was the scripted server."),
    Column("prompt", "str", "The task's initial prompt, when recorded."),
    Column("path", "str", "Trajectory file."),
    Column("task_hash", "str", "sha256 of the resolved task and the files it reads; None when not recorded."),
    Column("task_folder", "str", "Folder of the task file (its suite folder); None when not recorded."),
)

CRITERIA = (
    *KEYS,
    Column("outcome", "str", "The episode's outcome (so invalid episodes can be excluded)."),
    Column("criterion_id", "str", "Stable criterion id."),
    Column("kind", "str", "Criterion kind (file_exists, hidden_tests, ...)."),
    Column("description", "str", "What the criterion checks."),
    Column("score", "float64", "Score in [0, 1]."),
    Column("passed", "bool", "The criterion passed."),
    Column("gating", "bool", "The episode passes only if every gating criterion passes."),
    Column("weight", "float64", "Weight in the episode score."),
    Column("error", "str", "Set when the grader itself failed."),
    Column("observed_label", "str", "Classification: the label observed."),
    Column("expected_label", "str", "Classification: the label expected."),
    Column("details", "object", "Grader-specific evidence (a dict; judges put `votes` here)."),
)

TOOL_CALLS = (
    *KEYS,
    Column("order", "int64", "Position of the call within the episode, from 0."),
    Column("id", "str", "Tool-use id."),
    Column("name", "str", "Tool name (Bash, Read, Edit, Skill, ...)."),
    Column("input_summary", "str", "Bash command, file path, pattern, or short JSON of the input."),
    Column("is_error", "boolean", "The tool reported an error; <NA> when no result was recorded."),
    Column("duration_s", "float64", "Seconds from call to result."),
    Column("parent_tool_use_id", "str", "Set on sub-agent tool calls."),
    Column(
        "verified",
        "boolean",
        "The model asked for it (a counterpart at the endpoint); False: it never satisfies a criterion; "
        "<NA> where nothing could be checked.",
    ),
)

MESSAGES = (
    *KEYS,
    Column("order", "int64", "Position of the message within the episode, from 0."),
    Column("role", "str", "assistant, user or system."),
    Column("input_tokens", "float64", "Uncached input tokens; NaN when unknown."),
    Column("output_tokens", "float64", "Output tokens; NaN when unknown."),
    Column("cache_read_tokens", "float64", "Cache-read tokens; NaN when unknown."),
    Column("cache_creation_tokens", "float64", "Cache-creation tokens; NaN when unknown."),
    Column("model", "str", "Model that produced an assistant message."),
    Column("parent_tool_use_id", "str", "Sub-agent id (the Task tool call that spawned it)."),
    Column("simulated", "bool", "A user turn written by a user simulator."),
    Column("n_blocks", "int64", "Number of content blocks."),
    Column("text", "str", "Text blocks joined by blank lines, capped at TEXT_LIMIT characters."),
)

TEXT_LIMIT = 2_000
"""Characters of message text kept in the messages frame."""


def names(columns: tuple[Column, ...]) -> list[str]:
    """Column names in declared order: ``names(KEYS)`` -> ``['run_id', ...]``."""
    return [c.name for c in columns]
