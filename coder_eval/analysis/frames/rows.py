"""One trajectory file -> rows of the four frames, one function per table grain.

Lines are parsed with plain ``json`` and checked for ``type`` and ``schema_version`` only; full
pydantic validation of every event would cost more than the parse itself.

Example::

    parsed = parse_trajectory(Path("runs/latest/episodes/hello--default--r0.jsonl"))
    parsed.episode["outcome"], len(parsed.tool_calls)
"""

from __future__ import annotations

import json
import warnings
from collections import defaultdict
from pathlib import Path, PurePath
from typing import Any, NamedTuple

from coder_eval.analysis.frames.columns import TEXT_LIMIT
from coder_eval.errors import TrajectoryError
from coder_eval.trajectory import EVENT_TYPES, SCHEMA_VERSION, parsed_lines
from coder_eval.transcript import input_summary

_USAGE_KEYS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_creation_tokens")
Row = tuple[Any, ...]
WARN_LIST_LIMIT = 10


class ParsedEpisode(NamedTuple):
    """The rows one trajectory contributes, and what was wrong with the file."""

    episode: dict[str, Any]
    criteria: list[Row]
    tool_calls: list[Row]
    messages: list[Row]
    problems: list[str]


def read_events(path: Path) -> tuple[list[dict[str, Any]], list[str]]:
    """The events of a file as dicts, and its problems (unreadable or unknown lines, with their byte
    offsets).

    Example: ``events, problems = read_events(path)``. Another schema version raises TrajectoryError.
    """
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise TrajectoryError(f"{path}: cannot read trajectory: {exc}") from exc
    try:  # one parse of the whole file as an array; a damaged file falls back to line by line
        raws = json.loads("[" + data.decode("utf-8").strip().replace("\n", ",") + "]")
    except ValueError:  # UnicodeDecodeError is a ValueError too
        return read_lines(path, data)
    for raw in raws:  # one pass: any odd line sends the whole file to the careful reader
        if (
            type(raw) is not dict
            or raw.get("type") not in EVENT_TYPES
            or raw.get("schema_version") != SCHEMA_VERSION
        ):
            return read_lines(path, data)
    return raws, []


def read_lines(path: Path, data: bytes) -> tuple[list[dict[str, Any]], list[str]]:
    """``read_events`` line by line, naming each line that cannot be read."""
    events: list[dict[str, Any]] = []
    problems: list[str] = []
    for number, raw in parsed_lines(path, data, problems):
        if raw.get("type") not in EVENT_TYPES:
            problems.append(f"line {number} has unknown type {raw.get('type')!r}")
            continue
        events.append(raw)
    return events, problems


def parse_trajectory(path: Path) -> ParsedEpisode:
    """Read one trajectory into frame rows; an incomplete file becomes an invalid, interrupted episode.

    Example: ``parse_trajectory(path).episode["status"]`` -> ``'completed'``
    """
    events, problems = read_events(path)
    by_type: defaultdict[str, list[dict[str, Any]]] = defaultdict(list)
    for event in events:
        by_type[event["type"]].append(event)
    start = events[0] if events and events[0]["type"] == "episode_start" else None
    end = events[-1] if events and events[-1]["type"] == "episode_end" else None
    if start is None:
        problems.append("no episode_start")
    if end is None:
        problems.append("no episode_end")
    ends = [i for i, e in enumerate(events) if e["type"] == "episode_end"]
    if len(ends) > 1 or (ends and ends[0] != len(events) - 1):
        problems.append(f"tampered: {len(ends)} episode_end events, events written after the first")
        end = {**events[ends[0]], "outcome": "invalid", "status": "tampered"}
        end["error"] = f"the trajectory was written to after it ended ({len(ends)} episode_end events)"
    keys = episode_keys(path, start)
    messages = by_type["message"]
    episode = episode_row(path, keys, start, end, messages, len(by_type["tool_call"]), problems)
    return ParsedEpisode(
        episode=episode,
        criteria=criterion_rows(keys, episode["outcome"], by_type["criterion"]),
        tool_calls=tool_call_rows(keys, by_type["tool_call"], by_type["tool_result"], checked(end)),
        messages=message_rows(keys, messages),
        problems=problems,
    )


def episode_keys(path: Path, start: dict[str, Any] | None) -> Row:
    """(run_id, episode_id, task_id, variant_id, repeat), from episode_start or else the file name."""
    if start is not None:
        return (
            start["run_id"],
            start["episode_id"],
            start["task_id"],
            start.get("variant_id", "default"),
            start.get("repeat", 0),
        )
    task, _, rest = path.stem.partition("--")
    variant, _, repeat = rest.rpartition("--r")
    run_id = path.parent.parent.name if path.parent.name == "episodes" else ""
    return (run_id, path.stem, task, variant or "default", int(repeat) if repeat.isdigit() else 0)


def episode_row(
    path: Path,
    keys: Row,
    start: dict[str, Any] | None,
    end: dict[str, Any] | None,
    messages: list[dict[str, Any]],
    n_tool_calls: int,
    problems: list[str],
) -> dict[str, Any]:
    """The episodes-frame row of one trajectory (see ``columns.EPISODES``)."""
    start = start or {}
    agent = start.get("agent") or {}
    task = start.get("task") or {}
    row = dict(zip(("run_id", "episode_id", "task_id", "variant_id", "repeat"), keys, strict=True))
    row.update(
        model=next((m.get("model") for m in messages if m.get("model")), None) or agent.get("model"),
        agent=agent.get("type") or agent.get("kind") or agent.get("name"),
        tags=list(start.get("tags") or []),
        scripted=bool(start.get("scripted", False)),
        prompt=task.get("initial_prompt") or task.get("prompt"),
        path=str(path),
        n_tool_calls=n_tool_calls,
        task_hash=start.get("task_hash"),
        task_folder=str(PurePath(task["source_path"]).parent) if task.get("source_path") else None,
    )
    row.update(end_fields(end, problems))
    return row


def end_fields(end: dict[str, Any] | None, problems: list[str]) -> dict[str, Any]:
    """Outcome, totals and timings from episode_end; an interrupted episode when it is missing."""
    if end is None:
        nan = float("nan")
        error = "interrupted: " + "; ".join(problems)
        return dict(
            outcome="invalid",
            status="interrupted",
            passed=None,
            score=nan,
            duration_s=nan,
            agent_s=nan,
            input_tokens=nan,
            output_tokens=nan,
            cache_read_tokens=nan,
            cache_creation_tokens=nan,
            total_tokens=nan,
            cost_usd=nan,
            num_turns=nan,
            error=error,
            invalid_cause=None,
            record_source=None,
            record_verified=None,
            n_unverified=nan,
        )
    usage = end.get("usage") or {}
    timings = end.get("timings") or {}
    outcome = end["outcome"]
    tokens = {key: usage.get(key, 0) for key in _USAGE_KEYS}
    return dict(
        outcome=outcome,
        status=end["status"],
        passed=None if outcome == "invalid" else outcome == "pass",
        score=end.get("score", 0.0),
        duration_s=timings.get("total_s", float("nan")),
        agent_s=timings.get("agent_s", float("nan")),
        total_tokens=sum(tokens.values()),
        cost_usd=end.get("cost_usd"),
        num_turns=end.get("num_turns", 0),
        error=end.get("error"),
        invalid_cause=end.get("invalid_cause") if outcome == "invalid" else None,
        **record_fields(end.get("record")),
        **tokens,
    )


def record_fields(record: Any) -> dict[str, Any]:
    """``record_source``, ``record_verified`` and ``n_unverified`` of an ``episode_end.record``."""
    if not isinstance(record, dict):
        return dict(record_source=None, record_verified=None, n_unverified=float("nan"))
    source = record.get("source")
    return dict(
        record_source=source,
        record_verified=source in ("scripted", "proxy") and bool(record.get("confined")),
        n_unverified=record.get("unverified_count", 0),
    )


def criterion_rows(keys: Row, outcome: str, criteria: list[dict[str, Any]]) -> list[Row]:
    """Criteria-frame rows (see ``columns.CRITERIA``)."""
    return [
        (
            *keys,
            outcome,
            c["criterion_id"],
            c.get("kind"),
            c.get("description", ""),
            c.get("score"),
            c.get("passed"),
            c.get("gating", True),
            c.get("weight", 1.0),
            c.get("error"),
            c.get("observed_label"),
            c.get("expected_label"),
            c.get("details") or {},
        )
        for c in criteria
    ]


def checked(end: dict[str, Any] | None) -> set[str] | None:
    """The tool-use ids the endpoint's record did not verify (None: nothing was checked)."""
    record = (end or {}).get("record")
    if not isinstance(record, dict) or record.get("source") in (None, "agent"):
        return None
    return {str(i) for i in record.get("unverified_ids") or []}


def tool_call_rows(
    keys: Row, calls: list[dict[str, Any]], results: list[dict[str, Any]], unverified: set[str] | None = None
) -> list[Row]:
    """Tool-calls-frame rows (see ``columns.TOOL_CALLS``), each joined to its result by id; ``verified``
    from the episode's record check (``unverified``: the ids it refused; None: nothing checked)."""
    by_id = {r.get("id"): r for r in results}
    rows: list[Row] = []
    for order, call in enumerate(calls):
        result = by_id.get(call.get("id"), {})
        rows.append(
            (
                *keys,
                order,
                call.get("id"),
                call.get("name"),
                input_summary(call.get("input") or {}),
                result.get("is_error"),
                result.get("duration_s"),
                call.get("parent_tool_use_id"),
                None if unverified is None else call.get("id") not in unverified,
            )
        )
    return rows


def message_rows(keys: Row, messages: list[dict[str, Any]]) -> list[Row]:
    """Messages-frame rows (see ``columns.MESSAGES``)."""
    rows: list[Row] = []
    for order, message in enumerate(messages):
        usage = message.get("usage") or {}
        blocks = message.get("content") or []
        text = "\n\n".join(b["text"] for b in blocks if b.get("type") == "text" and "text" in b)
        rows.append(
            (
                *keys,
                order,
                message.get("role"),
                *(usage.get(k) for k in _USAGE_KEYS),
                message.get("model"),
                message.get("parent_tool_use_id"),
                bool(message.get("simulated", False)),
                len(blocks),
                text[:TEXT_LIMIT],
            )
        )
    return rows


def drop_duplicates(parsed: list[ParsedEpisode]) -> list[ParsedEpisode]:
    """One trajectory per (run_id, episode_id), preferring a complete one; warns when any is dropped."""
    kept: dict[tuple[str, str], ParsedEpisode] = {}
    dropped: list[str] = []
    for item in parsed:
        key = (item.episode["run_id"], item.episode["episode_id"])
        other = kept.get(key)
        if other is None or (other.episode["status"] == "interrupted" != item.episode["status"]):
            kept[key] = item
        dropped.extend([] if other is None else [f"{key[0]}/{key[1]}"])
    if dropped:
        warnings.warn(
            f"{len(dropped)} duplicate episode ids in the same run; kept one of each: "
            + ", ".join(dropped[:WARN_LIST_LIMIT]),
            stacklevel=3,
        )
    return list(kept.values())
