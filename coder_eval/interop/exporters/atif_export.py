"""coder_eval trajectories -> ATIF documents (``coder-eval export RUN_DIR --format atif --out DIR``).

Events are read with ``read_trajectory`` (the trajectory's own pydantic models); events that are no
step (criteria, anything a later schema adds) are skipped, and what the ATIF fields cannot hold (the
outcome, criteria, timings, the resolved task) goes to the document's ``extra.coder_eval``. Sub-agent
messages become embedded sub-agent trajectories, referenced from the result of the call that spawned
them. An interrupted episode is exported as far as it got, and its notes say so.

Example::

    export = export_atif(Path("runs/latest"), Path("atif"))
    export.written        # [PosixPath('atif/hello--default--r0.json'), ...]
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any, NamedTuple

from coder_eval.errors import InputError
from coder_eval.interop.exporters.atif import ATIF_VERSION, AtifTrajectory
from coder_eval.interop.exporters.atif_steps import Steps, metrics_of
from coder_eval.run_dir import RunDir
from coder_eval.trajectory import Event, Message, ToolCall, ToolResult, Trajectory, Usage, read_trajectory

_EVENT_FIELDS = {"type", "schema_version", "ts"}
_START_ELSEWHERE = {"agent", "versions"}
"""episode_start fields the document's ``agent`` holds; the others go to ``extra.coder_eval``."""
_END_ELSEWHERE = {"usage", "cost_usd", "agent_versions"}
"""episode_end fields ``final_metrics`` and ``agent`` hold."""
_NOT_AGENT_VERSIONS = {"coder_eval", "python"}


class Export(NamedTuple):
    """What ``export_atif`` wrote, and the trajectories that were incomplete or damaged."""

    written: list[Path]
    problems: list[str]


def export_atif(source: Path, out: Path) -> Export:
    """Write every trajectory of a run directory (or one trajectory file) to ``out/<episode_id>.json``.

    Example: ``export_atif(Path("runs/latest"), Path("atif")).written``
    """
    paths = [source] if source.is_file() else RunDir.open(source).trajectory_paths()
    if not paths:
        raise InputError(f"{source}: no trajectories in episodes/; nothing to export")
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    problems: list[str] = []
    for path in paths:
        trajectory = read_trajectory(path)
        target = out / f"{path.stem}.json"
        target.write_text(atif_document(trajectory).model_dump_json(exclude_none=True, indent=2) + "\n")
        written.append(target)
        problems.extend(f"{path.name}: {problem}" for problem in trajectory.problems)
    return Export(written, problems)


def atif_document(trajectory: Trajectory) -> AtifTrajectory:
    """One trajectory as an ATIF document, validated.

    Example: ``atif_document(read_trajectory(path)).steps[0].source`` -> ``'user'``
    """
    start = trajectory.start
    agent = agent_of(trajectory)
    steps = agent_steps(trajectory.events)
    top = assemble(None, steps, agent)
    if not top["steps"]:
        top["steps"] = [{"step_id": 1, "source": "system", "message": "The agent recorded no step."}]
    run, episode = (start.run_id, start.episode_id) if start else ("", trajectory.path.stem)
    document = {
        **top,
        "session_id": f"{run}/{episode}",
        "trajectory_id": episode,
        "notes": notes(trajectory),
        "final_metrics": final_metrics(trajectory, len(top["steps"])),
        "extra": {"coder_eval": episode_extra(trajectory)},
    }
    return AtifTrajectory.model_validate(document)


def agent_steps(events: list[Event]) -> dict[str | None, Steps]:
    """The steps of each agent: ``None`` for the top level, else the tool call that spawned it."""
    parents = {e.id: e.parent_tool_use_id for e in events if isinstance(e, ToolCall)}
    steps: defaultdict[str | None, Steps] = defaultdict(Steps)
    for event in events:
        if isinstance(event, Message | ToolCall):
            steps[event.parent_tool_use_id].add(event)
        elif isinstance(event, ToolResult):
            steps[parents.get(event.id)].add(event)
    steps.setdefault(None, Steps())
    return dict(steps)


def assemble(key: str | None, steps: dict[str | None, Steps], agent: dict[str, Any]) -> dict[str, Any]:
    """The trajectory of one agent, its sub-agents embedded in the trajectory whose call spawned them
    (at the top level when that call was not recorded)."""
    own = steps[key]
    children = [sub for sub in steps if sub is not None and sub != key and owner(sub, steps) == key]
    subagents = []
    for child in children:
        if child in own.by_call:
            own.refer(child)
        models = [s.get("model_name") for s in steps[child].steps if s.get("model_name")]
        sub_agent = {**agent, "model_name": models[0] if models else agent.get("model_name")}
        subagents.append({**assemble(child, steps, sub_agent), "trajectory_id": child})
    return {
        "schema_version": ATIF_VERSION,
        "agent": agent,
        "steps": own.numbered(),
        "subagent_trajectories": subagents or None,
    }


def owner(call_id: str, steps: dict[str | None, Steps]) -> str | None:
    """The agent that made tool call ``call_id`` (``None``: the top level, or nobody recorded it)."""
    found = next((key for key, own in steps.items() if call_id in own.by_call), None)
    return None if found == call_id else found


def agent_of(trajectory: Trajectory) -> dict[str, Any]:
    """ATIF's agent: the agent kind, its version (the CLI's own, e.g. ``claude_code``, else coder_eval's
    for its built-in agents), the model of the first assistant message (else the agent block's), and
    the resolved agent block with every recorded version."""
    start, end = trajectory.start, trajectory.end
    config = start.agent if start else {}
    versions = {**(start.versions if start else {}), **(end.agent_versions if end else {})}
    name = str(config.get("type") or config.get("kind") or config.get("name") or "unknown")
    others = [v for k, v in versions.items() if k not in _NOT_AGENT_VERSIONS]
    fallback = others[0] if others else versions.get("coder_eval", "unknown")  # built-in agents
    models = [e.model for e in trajectory.events if isinstance(e, Message) and e.model]
    return {
        "name": name,
        "version": versions.get(name.replace("-", "_"), fallback),
        "model_name": models[0] if models else config.get("model"),
        "extra": {"config": config, "versions": versions},
    }


def final_metrics(trajectory: Trajectory, n_steps: int) -> dict[str, Any]:
    """Totals from episode_end; summed from the messages when the episode has none."""
    end = trajectory.end
    if end is not None:
        usage, cost = end.usage, end.cost_usd
    else:
        usage, cost = (
            sum((e.usage for e in trajectory.events if isinstance(e, Message) and e.usage), Usage()),
            None,
        )
    metrics = metrics_of(usage) or {}
    totals = {
        f"total_{name}": metrics[name] for name in ("prompt_tokens", "completion_tokens", "cached_tokens")
    }
    return {**totals, "total_cost_usd": cost, "total_steps": n_steps, "extra": metrics["extra"]}


def episode_extra(trajectory: Trajectory) -> dict[str, Any]:
    """What ATIF has no field for: the episode's keys, task, outcome, timings and criteria."""
    start, end = trajectory.start, trajectory.end
    extra: dict[str, Any] = {"trajectory_file": trajectory.path.name, "problems": trajectory.problems}
    if start is not None:
        extra.update(start.model_dump(mode="json", exclude=_EVENT_FIELDS | _START_ELSEWHERE))
    if end is not None:
        extra.update(end.model_dump(mode="json", exclude=_EVENT_FIELDS | _END_ELSEWHERE))
    else:  # as load_runs reads it
        extra.update(outcome="invalid", status="interrupted")
    extra["criteria"] = [
        event.model_dump(mode="json", exclude=_EVENT_FIELDS)
        for event in trajectory.events
        if event.type == "criterion"
    ]
    return extra


def notes(trajectory: Trajectory) -> str:
    """Where the document came from, and what was wrong with the trajectory, if anything."""
    text = (
        f"Exported by coder_eval from {trajectory.path.name}. Outcome, criteria, timings and the "
        "resolved task are in extra.coder_eval; tool results keep coder_eval's cut (output_chars is "
        "the full length)."
    )
    if trajectory.problems:
        text += " The trajectory is incomplete: " + "; ".join(trajectory.problems) + "."
    return text
