"""What a worker hands back, written by the submitting process: whole files, attempts in order."""

from __future__ import annotations

import asyncio
import tarfile
from pathlib import Path

from coder_eval.episode.plan import EpisodePlan
from coder_eval.episode.snapshots import MB, SnapshotTarget
from coder_eval.executors.dask.episode_files import EpisodeFiles, write_interrupted
from coder_eval.task import load_tasks
from coder_eval.trajectory import read_trajectory
from tests.helpers import minimal_task


def plan(tmp_path: Path, extra: str = "agent: {kind: oracle}\nsandbox: {driver: tempdir}\n") -> EpisodePlan:
    return EpisodePlan(load_tasks([minimal_task(tmp_path / "tasks", "t", extra)])[0])


def test_an_episode_produced_in_scratch_is_written_whole_where_the_run_wants_it(tmp_path: Path) -> None:
    scratch, episodes = tmp_path / "scratch", tmp_path / "run" / "episodes"
    scratch.mkdir()
    episodes.mkdir(parents=True)
    files = asyncio.run(EpisodeFiles.produce(plan(tmp_path), "run-1", scratch))

    end = files.write(episodes / "t--default--r0.jsonl")

    written = read_trajectory(episodes / "t--default--r0.jsonl")
    assert end.outcome == "pass" and written.complete and written.end == end
    assert written.start is not None and written.start.run_id == "run-1"
    assert [p.name for p in episodes.iterdir()] == ["t--default--r0.jsonl"]  # no temporary file left


def test_a_kept_workspace_snapshot_travels_with_the_episode(tmp_path: Path) -> None:
    scratch, run = tmp_path / "scratch", tmp_path / "run"
    scratch.mkdir()
    (run / "episodes").mkdir(parents=True)
    files = asyncio.run(EpisodeFiles.produce(plan(tmp_path), "r", scratch, keep_bytes=MB))
    target = SnapshotTarget(run / "snapshots" / "t--default--r0.tar.gz", MB)

    end = files.write(run / "episodes" / "t--default--r0.jsonl", target)

    assert end.snapshot is not None and end.snapshot.file == "snapshots/t--default--r0.tar.gz"
    with tarfile.open(target.path) as tar:
        assert "ok.txt" in tar.getnames()
    assert end.snapshot.bytes == target.path.stat().st_size


def test_a_snapshot_over_the_cap_is_not_shipped(tmp_path: Path) -> None:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    files = asyncio.run(EpisodeFiles.produce(plan(tmp_path), "r", scratch, keep_bytes=1))
    target = SnapshotTarget(tmp_path / "snapshots" / "t.tar.gz", 1)

    end = files.write(tmp_path / "t.jsonl", target)

    assert files.snapshot is None and not target.path.exists()
    assert end.snapshot is not None and end.snapshot.file is None and "cap" in (end.snapshot.note or "")


def test_failed_provider_attempts_are_returned_and_written_in_order(tmp_path: Path) -> None:
    attempts = tuple(f"attempt {n}\n".encode() for n in range(1, 12))
    files = EpisodeFiles(b"final\n", attempts, EpisodeFiles.failed(plan(tmp_path), "r", "x").end)

    files.write(tmp_path / "e.jsonl")

    assert (tmp_path / "e.jsonl.attempt2").read_bytes() == b"attempt 2\n"
    assert (tmp_path / "e.jsonl.attempt11").read_bytes() == b"attempt 11\n"
    assert (tmp_path / "e.jsonl").read_bytes() == b"final\n"


def test_an_episode_no_worker_finished_is_recorded_invalid_never_lost(tmp_path: Path) -> None:
    end = EpisodeFiles.failed(plan(tmp_path), "r", "the dask worker died").write(tmp_path / "e.jsonl")
    read = read_trajectory(tmp_path / "e.jsonl")
    assert (end.outcome, end.status) == ("invalid", "infra_error")
    assert read.complete and read.end is not None and read.end.error == "the dask worker died"
    assert read.start is not None and read.start.task_id == "t"


def test_a_note_lands_in_the_recorded_episode_end(tmp_path: Path) -> None:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    files = asyncio.run(EpisodeFiles.produce(plan(tmp_path), "r", scratch))

    end = files.noted("run 2 times").write(tmp_path / "e.jsonl")

    read = read_trajectory(tmp_path / "e.jsonl")
    assert read.complete and read.end == end and end.notes[-1] == "run 2 times"
    assert len(read.events) == len(read_trajectory(scratch / "t--default--r0.jsonl").events)


def test_an_interrupted_episode_is_read_as_interrupted(tmp_path: Path) -> None:
    write_interrupted(plan(tmp_path), "r", tmp_path / "e.jsonl")
    read = read_trajectory(tmp_path / "e.jsonl")
    assert read.start is not None and read.end is None and not read.complete
