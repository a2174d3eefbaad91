"""Provenance: the suite's git commit and branch, and task content hashes that ignore the experiment."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from coder_eval.run.provenance import file_content_hash, source_of


def git(folder: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(folder), *args], check=True, capture_output=True)


def test_a_suite_in_git_records_commit_branch_and_dirtiness(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("CODER_EVAL_BRANCH", "GITHUB_HEAD_REF", "GITHUB_REF_NAME"):
        monkeypatch.delenv(name, raising=False)
    (tmp_path / "t.yaml").write_text("task_id: t\n")
    git(tmp_path, "init", "-q", "-b", "trunk")
    git(tmp_path, "-c", "user.email=a@b", "-c", "user.name=a", "add", ".")
    git(tmp_path, "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qm", "x")
    source = source_of([tmp_path / "t.yaml"])
    assert source is not None and source.git_branch == "trunk" and not source.git_dirty
    assert source.git_commit is not None and len(source.git_commit) == 40
    (tmp_path / "t.yaml").write_text("task_id: u\n")
    monkeypatch.setenv("GITHUB_HEAD_REF", "feature")
    source = source_of([tmp_path])
    assert source is not None and (source.git_branch, source.git_dirty) == ("feature", True)


def test_outside_git_only_the_branch_ci_names_is_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CODER_EVAL_BRANCH", "main")
    source = source_of([tmp_path])
    assert source is not None and (source.git_branch, source.git_commit) == ("main", None)
    monkeypatch.delenv("CODER_EVAL_BRANCH")
    for name in ("GITHUB_HEAD_REF", "GITHUB_REF_NAME"):
        monkeypatch.delenv(name, raising=False)
    assert source_of([tmp_path]) is None


def test_the_content_hash_covers_the_files_a_task_names(tmp_path: Path) -> None:
    (tmp_path / "fixtures").mkdir()
    (tmp_path / "fixtures" / "app.py").write_text("x = 1\n")
    task = tmp_path / "t.yaml"
    task.write_text("task_id: t\ntemplate_dir: fixtures\ninitial_prompt: fix it\n")
    first = file_content_hash(task)
    assert file_content_hash(task) == first
    (tmp_path / "fixtures" / "app.py").write_text("x = 2\n")
    second = file_content_hash(task)
    assert second != first
    task.write_text("task_id: t\ntemplate_dir: fixtures\ninitial_prompt: fix it now\n")
    assert file_content_hash(task) not in (first, second)


def test_a_task_that_is_a_folder_hashes_its_content(tmp_path: Path) -> None:
    (tmp_path / "task").mkdir()
    (tmp_path / "task" / "instruction.md").write_text("do it\n")
    first = file_content_hash(tmp_path / "task")
    (tmp_path / "task" / "instruction.md").write_text("do it now\n")
    assert file_content_hash(tmp_path / "task") != first


def test_the_content_hash_is_the_same_wherever_the_suite_is_checked_out(tmp_path: Path) -> None:
    for checkout in ("main", "elsewhere/pr"):
        (tmp_path / checkout / "fixtures").mkdir(parents=True)
        (tmp_path / checkout / "fixtures" / "app.py").write_text("x = 1\n")
        (tmp_path / checkout / "t.yaml").write_text(
            "task_id: t\ntemplate_dir: fixtures\ninitial_prompt: fix\n"
        )
        (tmp_path / checkout / "folder-task").mkdir()
        (tmp_path / checkout / "folder-task" / "instruction.md").write_text("do it\n")
    assert file_content_hash(tmp_path / "main" / "t.yaml") == file_content_hash(
        tmp_path / "elsewhere/pr/t.yaml"
    )
    assert file_content_hash(tmp_path / "main" / "folder-task") == file_content_hash(
        tmp_path / "elsewhere" / "pr" / "folder-task"
    )
