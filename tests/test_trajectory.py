"""Trajectories: the writer flushes per event, the reader tolerates crashes, the schema export is current."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import pytest

from coder_eval.analysis.frames.rows import read_events
from coder_eval.errors import RunWriteError, TrajectoryError
from coder_eval.run_dir import MANIFEST, RunDir, RunManifest
from coder_eval.trajectory import (
    DISK_SYNC,
    DiskSync,
    EpisodeEnd,
    EpisodeStart,
    Message,
    ToolCall,
    ToolResult,
    TrajectoryWriter,
    json_schema,
    read_trajectory,
)
from coder_eval.untrusted_json import MAX_DEPTH, TOO_DEEP

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


def test_text_holding_unicode_line_separators_reads_back_whole(tmp_path: Path) -> None:
    """JSON keeps U+2028, U+2029 and U+0085 raw inside strings; they end no line of the file."""
    path = tmp_path / "e.jsonl"
    text = "one\u2028two\u2029three\x85four"
    with TrajectoryWriter(path) as sink:
        sink.write(start())
        sink.write(Message(role="assistant", content=[{"type": "text", "text": text}]))
        sink.write(EpisodeEnd(outcome="fail", status="completed", error=text))
    trajectory = read_trajectory(path)
    assert trajectory.complete and trajectory.problems == []
    assert trajectory.end is not None and trajectory.end.error == text
    events, problems = read_events(path)
    assert problems == [] and events[1]["content"][0]["text"] == text
    path.write_text(path.read_text(encoding="utf-8") + "{cut", encoding="utf-8")  # the careful reader too
    events, problems = read_events(path)
    assert len(problems) == 1 and problems[0].startswith("line 4: unreadable (JSONDecodeError")
    assert events[-1]["error"] == text


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


def test_text_that_is_not_unicode_is_written_escaped_and_read_back_unchanged(tmp_path: Path) -> None:
    name = os.fsdecode(b"caf\xe9 \xff.txt")  # undecodable bytes, as a file name carries them
    lone = "half a pair: \ud83d"  # a lone surrogate, as a JSON escape in an event stream gives it
    path = tmp_path / "e.jsonl"
    with TrajectoryWriter(path) as sink:
        sink.write(start())
        sink.write(ToolResult(id="c1", output=f"{name} {lone}"))
        sink.write(EpisodeEnd(outcome="fail", status="completed", notes=[f"left out: {name}"]))
    raw = path.read_bytes()
    events = read_trajectory(path).events

    raw.decode("utf-8")  # strict: every line is valid UTF-8
    assert b"\\udce9 \\udcff.txt" in raw and b"\\ud83d" in raw
    assert isinstance(events[1], ToolResult) and events[1].output == f"{name} {lone}"
    assert os.fsencode(events[1].output.split()[0]) == b"caf\xe9"
    assert isinstance(events[2], EpisodeEnd) and events[2].notes == [f"left out: {name}"]


def test_input_nested_past_the_serializer_and_bytes_are_written_not_raised(tmp_path: Path) -> None:
    nested: dict[str, object] = {}
    cursor = nested
    for _ in range(400):
        cursor["a"] = {}
        cursor = cursor["a"]  # type: ignore[assignment]
    path = tmp_path / "e.jsonl"
    with TrajectoryWriter(path) as sink:
        sink.write(ToolCall(id="c1", name="Bash", input={"deep": nested, "raw": b"\xff\xfe", "n": math.nan}))
    (call,) = read_trajectory(path).events

    assert isinstance(call, ToolCall)
    assert call.input["raw"] == os.fsdecode(b"\xff\xfe") and call.input["n"] is None
    depth, value = 0, call.input["deep"]
    while isinstance(value, dict):
        depth, value = depth + 1, value["a"]
    assert value == TOO_DEEP and depth == MAX_DEPTH - 2


def open_descriptors() -> int:
    return len(list(Path("/proc/self/fd").iterdir()))


def test_a_closed_trajectory_is_synced_and_its_copy_closed_once_waited_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    synced: list[int] = []
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        synced.append(os.fstat(fd).st_ino)
        real_fsync(fd)

    DISK_SYNC.wait()  # what earlier tests closed is synced before this one counts
    monkeypatch.setattr(os, "fsync", fsync)
    before = open_descriptors()
    paths = [tmp_path / f"t--default--r{i}.jsonl" for i in range(5)]
    for path in paths:
        with TrajectoryWriter(path) as writer:
            writer.write(start())
    DISK_SYNC.wait()
    assert sorted(synced) == sorted(p.stat().st_ino for p in paths)
    assert open_descriptors() == before


def test_a_scratch_trajectory_is_not_synced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    synced: list[int] = []
    DISK_SYNC.wait()
    monkeypatch.setattr(os, "fsync", synced.append)
    with TrajectoryWriter(tmp_path / "t.jsonl", durable=False) as writer:
        writer.write(start())
    DISK_SYNC.wait()
    assert synced == []


def test_a_file_the_disk_cannot_sync_is_a_run_write_error_naming_it_at_the_next_wait() -> None:
    sync = DiskSync()
    readable, writable = os.pipe()  # fsync of a pipe fails (EINVAL)
    os.close(writable)
    sync.submit(readable, "runs/r/episodes/t--default--r0.jsonl")
    with pytest.raises(RunWriteError, match=r"t--default--r0\.jsonl: cannot sync it to disk"):
        sync.wait()
    sync.wait()  # said once
    with pytest.raises(OSError):
        os.fstat(readable)  # closed all the same


def test_a_manifest_is_not_written_while_a_trajectory_it_would_count_is_not_on_disk(
    tmp_path: Path,
) -> None:
    run = RunDir.create(tmp_path, RunManifest(run_id="r"))
    written = (run.path / MANIFEST).read_bytes()
    readable, writable = os.pipe()
    os.close(writable)
    DISK_SYNC.submit(readable, str(run.path / "episodes" / "t--default--r0.jsonl"))
    manifest = run.read_manifest()
    manifest.status = "completed"
    with pytest.raises(RunWriteError, match=r"t--default--r0\.jsonl"):
        run.write_manifest(manifest)
    assert (run.path / MANIFEST).read_bytes() == written
    run.write_manifest(manifest)
    assert run.read_manifest().status == "completed"
