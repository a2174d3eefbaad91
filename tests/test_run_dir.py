"""RunDir.create: the run directory, its manifest, and the ``latest`` link beside it."""

from __future__ import annotations

from pathlib import Path

import pytest

from coder_eval.run_dir import MANIFEST, RunDir, RunManifest


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
