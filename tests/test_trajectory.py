"""Trajectories: the writer flushes per event, the reader tolerates crashes, the schema export is current."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from coder_eval.errors import TrajectoryError
from coder_eval.trajectory import (
    EpisodeEnd,
    EpisodeStart,
    Message,
    ToolCall,
    TrajectoryWriter,
    json_schema,
    read_trajectory,
)

REPO = Path(__file__).resolve().parent.parent


def start() -> EpisodeStart:
    return EpisodeStart(run_id="r", episode_id="t--default--r0", task_id="t", seed=1)


def test_each_event_is_on_disk_as_soon_as_it_is_written(tmp_path: Path) -> None:
    path = tmp_path / "e.jsonl"
    with TrajectoryWriter(path) as sink:
        sink.write(start())
        sink.write(ToolCall(id="c1", name="Bash", input={"command": "ls"}))
        lines = path.read_text().splitlines()  # read before close: flushed already
        assert [json.loads(line)["type"] for line in lines] == ["episode_start", "tool_call"]
        sink.write(EpisodeEnd(outcome="pass", status="completed"))
    trajectory = read_trajectory(path)
    assert trajectory.complete and trajectory.problems == []
    assert trajectory.end is not None and trajectory.end.outcome == "pass"


def test_truncated_last_line_and_missing_end_are_reported_not_raised(tmp_path: Path) -> None:
    path = tmp_path / "e.jsonl"
    with TrajectoryWriter(path) as sink:
        sink.write(start())
        sink.write(Message(role="assistant", content=[{"type": "text", "text": "hi"}]))
    with path.open("a") as handle:
        handle.write('{"type": "tool_call", "schema_ver')  # a crash mid-line
    offset = len(b"".join(path.read_bytes().splitlines(keepends=True)[:2]))
    trajectory = read_trajectory(path)
    assert not trajectory.complete
    assert len(trajectory.events) == 2
    assert trajectory.problems == [
        f"line 3: unreadable (JSONDecodeError at byte {offset})",
        "no episode_end (interrupted)",
    ]


def test_other_schema_version_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "e.jsonl"
    record = json.loads(start().model_dump_json())
    path.write_text(json.dumps({**record, "schema_version": 99}) + "\n")
    with pytest.raises(TrajectoryError, match=r"e.jsonl:1: trajectory schema_version 99 is not supported"):
        read_trajectory(path)


def test_exported_json_schema_is_current() -> None:
    exported = json.loads((REPO / "docs" / "trajectory.schema.json").read_text())
    assert exported == json.loads(json.dumps(json_schema())), "run `make schema` to refresh docs/"


def test_every_event_field_is_documented() -> None:
    for name, definition in json_schema()["$defs"].items():
        for field, spec in definition.get("properties", {}).items():
            if field not in {"type", "schema_version", "ts"}:
                assert spec.get("description"), f"{name}.{field} has no description"
