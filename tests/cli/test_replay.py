"""``coder-eval replay`` from the command line: what it refuses, and how it says so."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import coder_eval
from tests.regrade.builders import greet_task, make_run


def test_a_run_with_nothing_to_replay_is_refused_with_why(tmp_path: Path) -> None:
    greet_task(tmp_path / "tasks", "oracle-only", counter=tmp_path / "count")
    source = make_run(tmp_path / "runs", [tmp_path / "tasks"])

    done = coder_eval("replay", str(source.path), "--run-dir", str(tmp_path / "runs" / "again"), cwd=tmp_path)

    assert done.returncode == 2, done.stderr
    assert "no episode can be replayed" in done.stderr and "no endpoint record" in done.stderr
    assert not (tmp_path / "runs" / "again").exists()


def test_an_existing_target_is_refused(tmp_path: Path) -> None:
    greet_task(tmp_path / "tasks", "oracle-only", counter=tmp_path / "count")
    source = make_run(tmp_path / "runs", [tmp_path / "tasks"])

    done = coder_eval("replay", str(source.path), "--run-dir", str(source.path), cwd=tmp_path)

    assert done.returncode == 2 and "already exists" in done.stderr
