"""FIFOs, sockets and symlink loops in task folders: never opened (a FIFO would block), skipped with
a note or refused saying what they are; the same task file given twice is one file."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from coder_eval.errors import TaskError
from coder_eval.file_kinds import not_readable
from coder_eval.task import discover, load_tasks
from tests.helpers import coder_eval, minimal_task

TEMPLATE = (
    "sandbox: {driver: tempdir, template_sources: [{template_dir: fixtures/app}]}\nagent: {kind: oracle}\n"
)


def test_what_a_path_is_when_it_cannot_be_read(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "loop").symlink_to("loop")
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(tmp_path / "sock"))
        assert not_readable(tmp_path / "sock") == "a socket, not a regular file"
    assert not_readable(tmp_path / "pipe") == "a FIFO, not a regular file"
    assert not_readable(tmp_path / "loop") == "a symlink loop"
    assert not_readable(tmp_path / "missing") == "not found"
    assert not_readable(tmp_path) == "a directory, not a file"
    assert not_readable(tmp_path, want_dir=True) is None


def test_plan_skips_a_fifo_in_the_task_folder_with_a_note(tmp_path: Path) -> None:
    minimal_task(tmp_path / "tasks", "a", extra="agent: {kind: oracle}\n")
    os.mkfifo(tmp_path / "tasks" / "pipe.yaml")
    (tmp_path / "tasks" / "loop.yml").symlink_to("loop.yml")

    result = coder_eval("plan", "tasks", cwd=tmp_path, timeout=60)

    assert result.returncode == 0, result.stderr
    assert "pipe.yaml: a FIFO, not a regular file; skipped, not read as a task" in result.stderr
    assert "loop.yml: a symlink loop; skipped, not read as a task" in result.stderr
    assert "a--default--r0" in result.stdout


@pytest.mark.parametrize(
    ("make", "says"), [(os.mkfifo, "a FIFO, not a regular file"), (None, "a symlink loop")]
)
def test_a_task_file_given_by_name_that_cannot_be_read_says_what_it_is(
    tmp_path: Path, make: object, says: str
) -> None:
    path = tmp_path / "task.yaml"
    if make is None:
        path.symlink_to("task.yaml")
    else:
        make(path)  # type: ignore[operator]
    with pytest.raises(TaskError, match=f"task.yaml: {says}; pass task files or folders of them"):
        discover([path])


def test_a_fifo_in_a_template_is_left_out_of_the_sandbox_with_a_warning(tmp_path: Path) -> None:
    app = tmp_path / "tasks" / "fixtures" / "app"
    app.mkdir(parents=True)
    (app / "README").write_text("hello\n")
    os.mkfifo(app / "pipe")
    minimal_task(tmp_path / "tasks", "a", extra=TEMPLATE)

    result = coder_eval("run", "tasks", "--run-dir", "runs/r", "--no-report", cwd=tmp_path, timeout=120)

    assert result.returncode == 0, result.stderr
    assert f"task 'a': {app / 'pipe'} (a FIFO) is left out of the sandbox, unopened" in result.stderr
    assert "pass 1" in result.stdout


def test_a_template_folder_in_a_symlink_loop_is_called_one(tmp_path: Path) -> None:
    (tmp_path / "tasks" / "fixtures").mkdir(parents=True)
    (tmp_path / "tasks" / "fixtures" / "app").symlink_to("app")
    path = minimal_task(tmp_path / "tasks", "a", extra=TEMPLATE)
    with pytest.raises(TaskError, match=r"directory 'fixtures/app' is a symlink loop"):
        load_tasks([path])


def test_the_same_task_file_given_twice_is_one_file(tmp_path: Path) -> None:
    path = minimal_task(tmp_path / "tasks", "a")
    (tmp_path / "alias.yaml").symlink_to(path)
    found = discover([path, tmp_path / "tasks", Path(os.path.relpath(path)), tmp_path / "alias.yaml"])
    assert found == [path]
    assert [t.task_id for t in load_tasks([path, path])] == ["a"]
