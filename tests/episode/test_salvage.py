"""One episode can never end the batch: whatever escapes it, it gets an ``episode_end``, the other
episodes finish, and ``run.json`` is completed."""

from __future__ import annotations

import json
from pathlib import Path

from coder_eval.episode.salvage import salvage
from coder_eval.trajectory import EpisodeEnd, EpisodeStart, read_trajectory
from tests.helpers import coder_eval, minimal_task

UNWRITABLE_NOTE = r"""
sandbox: {driver: tempdir}
agent: {kind: command, command: "ln -s /etc/hostname \"$(printf 'x\\377y')\"; echo ok > ok.txt"}
"""
"""A link out of the workspace named in bytes that are not UTF-8: the note that the snapshot left it
out names it, and an ``episode_end`` holding that name could not be written as JSON."""

START = EpisodeStart(run_id="r", episode_id="t--v--r0", task_id="t", variant_id="v", seed=1)


def test_an_episode_whose_end_cannot_be_written_does_not_end_the_batch(tmp_path: Path) -> None:
    minimal_task(tmp_path / "tasks", "a-odd", extra=UNWRITABLE_NOTE)
    for task_id in ("b", "c"):
        minimal_task(tmp_path / "tasks", task_id, extra="agent: {kind: oracle}\n")
    run = tmp_path / "runs" / "r"

    result = coder_eval("run", "tasks", "--run-dir", str(run), "--no-report", cwd=tmp_path)

    assert result.returncode == 0, result.stderr
    ends = {p.stem: read_trajectory(p).end for p in sorted((run / "episodes").glob("*.jsonl"))}
    assert all(end is not None for end in ends.values()) and len(ends) == 3
    assert ends["b--default--r0"].outcome == ends["c--default--r0"].outcome == "pass"  # type: ignore[union-attr]
    assert json.loads((run / "run.json").read_text())["status"] == "completed"


def test_salvage_ends_a_cut_trajectory_on_a_line_of_its_own(tmp_path: Path) -> None:
    path = tmp_path / "t--v--r0.jsonl"
    path.write_text(START.model_dump_json() + '\n{"type": "mess')

    end = salvage(path, START, TypeError("boom \udcff"))

    trajectory = read_trajectory(path)
    assert trajectory.end == end and [e.type for e in trajectory.events] == ["episode_start", "episode_end"]
    assert (end.outcome, end.status, end.invalid_cause) == ("invalid", "infra_error", "harness")
    assert end.error == "the harness failed while running the episode: TypeError: boom \\udcff"


def test_salvage_starts_a_trajectory_that_has_no_start_and_keeps_one_that_ended(tmp_path: Path) -> None:
    empty, ended = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    salvage(empty, START, RuntimeError("before anything"))
    assert read_trajectory(empty).complete

    recorded = EpisodeEnd(outcome="pass", status="completed")
    ended.write_text(START.model_dump_json() + "\n" + recorded.model_dump_json() + "\n")
    before = ended.read_bytes()
    assert salvage(ended, START, RuntimeError("while closing")).outcome == "pass"
    assert ended.read_bytes() == before
