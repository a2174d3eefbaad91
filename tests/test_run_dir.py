"""RunDir.create: the run directory, its manifest, and the ``latest`` link beside it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from coder_eval.errors import ManifestError, RunLocked
from coder_eval.run_dir import MANIFEST, RunDir, RunManifest
from tests.helpers import coder_eval


def test_create_points_latest_at_the_new_run(tmp_path: Path) -> None:
    RunDir.create(tmp_path, RunManifest(run_id="first"))
    RunDir.create(tmp_path, RunManifest(run_id="second"))

    assert (tmp_path / "latest").readlink() == Path("second")
    assert RunDir.open(tmp_path / "latest").read_manifest().run_id == "second"


def test_a_run_named_latest_is_created_and_left_as_a_directory(tmp_path: Path) -> None:
    run = RunDir.create(tmp_path, RunManifest(run_id="latest"))

    assert (run.path / MANIFEST).is_file()
    assert not run.path.is_symlink()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["latest"]


def test_a_real_latest_directory_is_not_replaced(tmp_path: Path) -> None:
    (tmp_path / "latest").mkdir()

    run = RunDir.create(tmp_path, RunManifest(run_id="next"))

    assert (run.path / MANIFEST).is_file()
    assert not (tmp_path / "latest").is_symlink()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["latest", "next"]


def test_a_failing_link_neither_fails_the_run_nor_leaves_a_temporary_link(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(self: Path, target: str | Path, target_is_directory: bool = False) -> None:
        self.write_text("half-made link")
        raise PermissionError("symlinks not allowed here")

    monkeypatch.setattr(Path, "symlink_to", refuse)

    run = RunDir.create(tmp_path, RunManifest(run_id="next"))

    assert (run.path / MANIFEST).is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["next"]


def test_set_aside_never_overwrites_an_earlier_partial_trajectory(tmp_path: Path) -> None:
    run = RunDir.create(tmp_path / "runs", RunManifest(run_id="r"))
    for attempt in ("first", "second", "third"):
        run.episode_path("e").write_text(attempt)
        run.set_aside("e")
    (run.path / "partial" / "e.1.jsonl").unlink()  # someone tidied by hand
    run.episode_path("e").write_text("fourth")
    run.set_aside("e")
    kept = sorted(p.read_text() for p in (run.path / "partial").glob("e.*.jsonl"))
    assert kept == ["first", "fourth", "third"]


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (b'{"run_id": "r", "status": "comp', "not JSON"),
        (b'{"run_id": "r\xff"}', "not UTF-8 text (byte 13)"),
        (b'{"name": "a notebook", "cells": []}', "not a coder_eval run manifest (no run_id)"),
        (b'{"run_id": "r", "status": "finished"}', "not a coder_eval run manifest: status"),
        (b'{"run_id": "r", "schema_version": 7}', "manifest schema_version 7 is not supported"),
        (b"[1, 2]", "not a coder_eval run manifest (no run_id)"),
    ],
)
def test_a_manifest_that_cannot_be_read_is_an_input_error_naming_it(
    tmp_path: Path, content: bytes, says: str
) -> None:
    (tmp_path / MANIFEST).write_bytes(content)
    with pytest.raises(ManifestError, match=re.escape(f"{tmp_path / MANIFEST}: ")) as raised:
        RunDir.open(tmp_path).read_manifest()
    assert says in str(raised.value)


def test_resume_of_a_run_whose_manifest_is_damaged_exits_2_naming_it(tmp_path: Path) -> None:
    run = tmp_path / "runs" / "r"
    (run / "episodes").mkdir(parents=True)
    (run / MANIFEST).write_bytes(b'{"run_id": "r", "tasks": ["\xe9"]}')
    result = coder_eval("run", "--resume", "--run-dir", str(run), "--no-report", cwd=tmp_path)
    assert result.returncode == 2
    assert f"error: {run / MANIFEST}: not UTF-8 text" in result.stderr
    assert "Traceback" not in result.stderr


def test_set_aside_moves_failed_attempts_with_the_trajectory(tmp_path: Path) -> None:
    run = RunDir.create(tmp_path / "runs", RunManifest(run_id="r"))
    run.episode_path("e").write_text("last")
    (run.episodes_dir / "e.jsonl.attempt1").write_text("first")
    run.set_aside("e")
    assert sorted(p.name for p in (run.path / "partial").iterdir()) == ["e.0.jsonl", "e.0.jsonl.attempt1"]
    assert not list(run.episodes_dir.iterdir())


def test_a_created_run_is_locked_until_released(tmp_path: Path) -> None:
    run = RunDir.create(tmp_path, RunManifest(run_id="r"))
    with pytest.raises(RunLocked):
        RunDir.open(run.path, lock=True)
    run.release()
    RunDir.open(run.path, lock=True).release()
