"""A run's task files frozen before its first episode: a template edited while the run goes on does
not reach its later episodes (local and dask alike), the hashes are of what ran, and what cannot be
frozen (a link out of the task's folder, a folder over the cap) is refused before anything is made;
a FIFO is left out, never opened."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from coder_eval.episode.plan import plan_episodes
from coder_eval.errors import InputError
from coder_eval.run.frozen import freeze
from coder_eval.run.provenance import file_content_hash
from coder_eval.task import load_tasks
from coder_eval.task.files import task_hash
from tests.helpers import coder_eval, write_task

TASK = """
task_id: {task_id}
initial_prompt: copy a.txt to ok.txt
agent: {{kind: command, command: "{command}"}}
sandbox:
  driver: tempdir
  template_sources:
    - template_dir: fixtures/app
success_criteria:
  - {{type: file_contains, path: ok.txt, includes: [hello]}}
"""
EXECUTORS = ["local", pytest.param("dask", marks=pytest.mark.slow)]


def suite(root: Path) -> Path:
    """Two tasks on one template; the first one's agent edits the template on the host (it can: the
    tempdir driver is no boundary), as a person editing the suite mid-run would."""
    tasks = root / "tasks"
    (tasks / "fixtures" / "app").mkdir(parents=True)
    (tasks / "fixtures" / "app" / "a.txt").write_text("hello\n")
    template = tasks / "fixtures" / "app" / "a.txt"
    write_task(
        tasks, TASK.format(task_id="t1", command=f"echo bye > {template}; cat a.txt > ok.txt"), "t1.yaml"
    )
    write_task(tasks, TASK.format(task_id="t2", command="cat a.txt > ok.txt"), "t2.yaml")
    return tasks


@pytest.mark.parametrize("executor", EXECUTORS)
def test_a_template_edited_mid_run_does_not_reach_the_later_episodes(tmp_path: Path, executor: str) -> None:
    tasks = suite(tmp_path)

    done = coder_eval(
        "run", "tasks", "--no-report", "--executor", executor, "--run-dir", "runs/r", cwd=tmp_path
    )

    assert done.returncode == 0, done.stdout + done.stderr
    assert (tasks / "fixtures" / "app" / "a.txt").read_text() == "bye\n"  # edited while the run went on
    assert "pass 2  fail 0" in done.stdout  # t2 ran the template as it was hashed, not as edited
    (tasks / "fixtures" / "app" / "a.txt").write_text("hello\n")
    recorded = json.loads((tmp_path / "runs" / "r" / "run.json").read_text())["task_hashes"]
    assert recorded["t2"] == file_content_hash(tasks / "t2.yaml")  # the hash of what ran
    again = coder_eval("run", "--resume", "--run-dir", "runs/r", "--no-report", cwd=tmp_path)
    assert again.returncode == 0 and "(kept 2 finished)" in again.stdout, again.stderr


def test_the_frozen_hash_is_the_task_hash_and_the_copies_go_when_the_run_ends(tmp_path: Path) -> None:
    tasks = suite(tmp_path)
    plans = plan_episodes(load_tasks([tasks]))

    with freeze(plans, "local") as frozen:
        (tasks / "fixtures" / "app" / "a.txt").write_text("changed\n")
        (plan, copy) = frozen.plans[0], frozen.plans[0].frozen.moves[0][1]  # type: ignore[union-attr]
        assert Path(copy, "a.txt").read_text() == "hello\n" and (frozen.folder / "owner.json").is_file()
        first = plan.frozen.task_hash  # type: ignore[union-attr]
    (tasks / "fixtures" / "app" / "a.txt").write_text("hello\n")
    assert first == task_hash(load_tasks([tasks / "t1.yaml"])[0])
    assert not frozen.folder.exists()


def test_a_link_inside_the_task_folder_is_frozen_as_its_file(tmp_path: Path) -> None:
    tasks = suite(tmp_path)
    (tasks / "shared.txt").write_text("shared\n")
    (tasks / "fixtures" / "app" / "b.txt").symlink_to("../../shared.txt")
    plans = plan_episodes(load_tasks([tasks / "t2.yaml"]))

    with freeze(plans, "local") as frozen:
        copy = Path(frozen.plans[0].frozen.moves[0][1])  # type: ignore[union-attr]
        assert (copy / "b.txt").read_text() == "shared\n" and not (copy / "b.txt").is_symlink()


@pytest.mark.parametrize("executor", EXECUTORS)
def test_a_link_out_of_the_task_folder_is_refused_before_anything_is_made(
    tmp_path: Path, executor: str
) -> None:
    tasks = suite(tmp_path)
    link = tasks / "fixtures" / "app" / "passwd"
    link.symlink_to("/etc/passwd")

    done = coder_eval("run", "tasks", "--executor", executor, cwd=tmp_path)

    assert done.returncode == 2, done.stdout + done.stderr
    assert f"error: {link}: a symbolic link out of the task's folder {tasks} (to /etc/passwd)" in done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "runs").exists()


@pytest.mark.parametrize("executor", EXECUTORS)
def test_a_fifo_in_the_task_folder_is_left_out_and_never_opened(tmp_path: Path, executor: str) -> None:
    tasks = suite(tmp_path)
    os.mkfifo(tasks / "fixtures" / "app" / "pipe")  # opened for reading, it would block forever
    os.mkfifo(tasks / "pipe")

    done = coder_eval("run", "tasks", "--no-report", "--executor", executor, cwd=tmp_path, timeout=240)

    assert done.returncode == 0, done.stdout + done.stderr
    assert "pipe (a FIFO) is left out of the sandbox, unopened" in done.stderr


@pytest.mark.parametrize("executor", EXECUTORS)
def test_files_over_the_cap_are_refused_saying_how_to_raise_it(tmp_path: Path, executor: str) -> None:
    tasks = suite(tmp_path)
    (tasks / "fixtures" / "app" / "big.bin").write_bytes(os.urandom(3 * 1024 * 1024))
    env = {**os.environ, "CODER_EVAL_BUNDLE_MAX_MB": "2"}

    done = coder_eval("run", "tasks", "--no-report", "--executor", executor, cwd=tmp_path, env=env)

    assert done.returncode == 2 and not (tmp_path / "runs").exists(), done.stdout + done.stderr
    assert "3.0 MB of files, over the 2 MB a task's files may take" in done.stderr
    assert "raise the cap: CODER_EVAL_BUNDLE_MAX_MB=4" in done.stderr
    raised = coder_eval("run", "tasks", "--no-report", "--executor", executor, cwd=tmp_path,
                        env={**env, "CODER_EVAL_BUNDLE_MAX_MB": "4"})  # fmt: skip
    assert raised.returncode == 0, raised.stdout + raised.stderr


def test_a_cap_that_is_not_a_number_is_refused(tmp_path: Path) -> None:
    suite(tmp_path)
    env = {**os.environ, "CODER_EVAL_BUNDLE_MAX_MB": "lots"}
    done = coder_eval("run", "tasks", cwd=tmp_path, env=env)
    assert (
        done.returncode == 2 and "CODER_EVAL_BUNDLE_MAX_MB='lots': not a positive number of MB" in done.stderr
    )


def test_a_task_without_a_file_runs_as_it_is(tmp_path: Path) -> None:
    tasks = suite(tmp_path)
    (plan,) = plan_episodes(load_tasks([tasks / "t2.yaml"]))
    loose = plan.__class__(plan.task.model_copy(update={"source_path": None}))
    with freeze([loose], "local") as frozen:
        assert frozen.plans == [loose]
    with pytest.raises(InputError, match="not a positive number"):
        os.environ["CODER_EVAL_BUNDLE_MAX_MB"] = "0"
        try:
            with freeze(plan_episodes(load_tasks([tasks / "t2.yaml"])), "local"):
                pass
        finally:
            del os.environ["CODER_EVAL_BUNDLE_MAX_MB"]
