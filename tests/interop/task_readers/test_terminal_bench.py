"""Terminal-Bench task folders (``task.yaml``, ``run-tests.sh``, ``solution.sh``, ``tests/``,
``Dockerfile``, ``docker-compose.yaml``) read directly, with the container paths their scripts name.

The fixtures (``fixtures/terminal_bench``) are Terminal-Bench-style tasks of our own: a Python task
whose tests open ``/app/...``, a shell task using ``${APP_DIR:-/app}``, and one whose ``run-tests.sh``
ends with ``exit`` (Harbor's mapper would append its reward lines after it: ``test_harbor.py``).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from coder_eval.criteria.reward_file import RewardFile
from coder_eval.errors import TaskError
from coder_eval.sandbox import DockerSpec
from coder_eval.task import ReferenceFolder, load_tasks
from tests.helpers import coder_eval, write_task
from tests.interop.task_readers.builders import FIXTURES, outcomes, run_tasks

TASKS = FIXTURES / "terminal_bench"


@pytest.fixture
def word_count(tmp_path: Path) -> Path:
    """A copy of the Python task, to change."""
    return Path(shutil.copytree(TASKS / "py-word-count", tmp_path / "py-word-count"))


def test_a_task_maps_its_prompt_environment_verifier_oracle_and_timeouts() -> None:
    (task,) = load_tasks([TASKS / "py-word-count"])

    assert (task.task_id, task.tags) == ("py-word-count", ["terminal-bench", "python"])
    assert task.prompt.startswith("/app/words.txt holds some words.")
    assert isinstance(task.sandbox, DockerSpec) and task.sandbox.driver == "docker"
    assert task.sandbox.docker.dockerfile_path == str(TASKS / "py-word-count" / "Dockerfile")
    assert task.sandbox.docker.build.exclude == ["tests", "run-tests.sh", "solution.sh"]
    assert (task.sandbox.workdir, task.sandbox.env, task.sandbox.network) == (
        "/app",
        {"TEST_DIR": "/tests"},
        "host",
    )
    assert task.hidden_tests is not None and task.hidden_tests.mount_point == "/tests"
    assert task.container_paths() == ["/app", "/tests", "/solution", "/logs"]
    solution = task.reference_solution
    assert isinstance(solution, ReferenceFolder) and solution.command == "bash /solution/solution.sh"
    assert solution.path == str(TASKS / "py-word-count" / "solution.sh")
    (criterion,) = task.success_criteria
    assert isinstance(criterion, RewardFile) and (criterion.timeout, criterion.reward_file) == (
        60.0,
        "/logs/verifier/reward.txt",
    )
    assert task.run_limits.task_timeout == 120.0


def test_a_task_without_tests_gets_an_empty_tests_folder_for_its_runner() -> None:
    (task,) = load_tasks([TASKS / "sh-greeting"])
    assert task.hidden_tests is None and task.sandbox.scratch_dirs == ["/logs", "/tests"]


def test_compose_settings_are_kept_and_the_dockerfile_workdir_is_the_workspace(word_count: Path) -> None:
    compose = (word_count / "docker-compose.yaml").read_text()
    (word_count / "docker-compose.yaml").write_text(
        compose.replace(
            "      - TEST_DIR=${T_BENCH_TEST_DIR}\n",
            "      - TEST_DIR=${T_BENCH_TEST_DIR}\n      - MODE=strict\n",
        )
    )
    (word_count / "Dockerfile").write_text("FROM coder-eval/base\nWORKDIR /srv\nWORKDIR data\n")
    (task,) = load_tasks([word_count])
    assert task.sandbox.workdir == "/srv/data" and task.sandbox.env == {
        "TEST_DIR": "/tests",
        "MODE": "strict",
    }

    (word_count / "docker-compose.yaml").write_text(
        "services:\n  client:\n    image: local/tb:1\n    working_dir: /work\n"
    )
    (task,) = load_tasks([word_count])
    assert isinstance(task.sandbox, DockerSpec)
    assert (task.sandbox.docker.image, task.sandbox.workdir) == ("local/tb:1", "/work")


def test_hidden_material_the_dockerfile_copies_by_name_stays_in_its_build(word_count: Path) -> None:
    (word_count / "Dockerfile").write_text("FROM coder-eval/base\nCOPY ./tests/ /tests\nCOPY . /app/\n")
    (task,) = load_tasks([word_count])
    assert isinstance(task.sandbox, DockerSpec)
    assert task.sandbox.docker.build.exclude == ["run-tests.sh", "solution.sh"]


@pytest.mark.parametrize(
    ("change", "error"),
    [
        (
            lambda d: (d / "solution.yaml").write_text("- command: echo\n"),
            "solution.yaml .* write it as solution.sh",
        ),
        (
            lambda d: (d / "docker-compose.yaml").write_text(
                "services:\n  client: {build: .}\n  db: {image: pg}\n"
            ),
            r"2 services \(client, db\); tasks that need more than one container are not supported",
        ),
        (lambda d: (d / "task.yaml").write_text("author_name: x\n"), r"task.yaml.*instruction"),
        (
            lambda d: (d / "task.yaml").write_text("instruction: x\nmax_test_timeout_sec: soon\n"),
            r"task.yaml:2: max_test_timeout_sec",
        ),
        (lambda d: (d / "Dockerfile").unlink(), r"Dockerfile .*Dockerfile is missing"),
    ],
)
def test_what_cannot_be_read_is_refused_by_name(word_count: Path, change: object, error: str) -> None:
    change(word_count)  # type: ignore[operator]
    with pytest.raises(TaskError, match=error):
        load_tasks([word_count])


def test_a_folder_is_terminal_benchs_only_with_its_runner(tmp_path: Path) -> None:
    """coder_eval's own task file named task.yaml is still one; a folder search finds both kinds."""
    own = write_task(
        tmp_path / "suite" / "own",
        "task_id: own\ninitial_prompt: p\nsuccess_criteria: [{type: file_exists, path: x}]\n",
    )
    shutil.copytree(TASKS / "sh-greeting", tmp_path / "suite" / "tb" / "sh-greeting")
    assert own.name == "task.yaml"
    assert sorted(t.task_id for t in load_tasks([tmp_path / "suite"])) == ["own", "sh-greeting"]
    assert [t.task_id for t in load_tasks([tmp_path / "suite" / "tb" / "sh-greeting" / "task.yaml"])] == [
        "sh-greeting"
    ]


def test_plan_refuses_a_task_whose_base_image_is_not_here_with_what_to_do(
    word_count: Path, tmp_path: Path
) -> None:
    base = "ghcr.io/laude-institute/t-bench/python-3-13:20250620"
    (word_count / "Dockerfile").write_text(f"FROM {base}\nWORKDIR /app\nCOPY words.txt /app/\n")

    for command in ("plan", "run"):
        done = coder_eval(command, str(word_count), "--agent", "oracle", cwd=tmp_path)
        assert done.returncode == 2, done.stdout + done.stderr
        assert f"starts FROM '{base}', which is not on this machine" in done.stderr
        assert "coder_eval never pulls an image: build or load it first" in done.stderr
    assert not (tmp_path / "runs").exists()


@pytest.mark.slow
@pytest.mark.docker
@pytest.mark.timeout(900)
def test_the_oracle_passes_and_doing_nothing_fails_in_each_tasks_container(tmp_path: Path) -> None:
    """Read directly, the runner's exit status is the reward, written once it ended: the task whose
    runner ends with ``exit`` passes with the oracle (Harbor's mapping of it writes no reward)."""
    found = {agent: outcomes(run_tasks(TASKS, agent, tmp_path)) for agent in ("oracle", "none")}

    assert {agent: {t: e.outcome for t, e in ended.items()} for agent, ended in found.items()} == {
        "oracle": {"exit-before-reward": "pass", "py-word-count": "pass", "sh-greeting": "pass"},
        "none": {"exit-before-reward": "fail", "py-word-count": "fail", "sh-greeting": "fail"},
    }
    assert {e.driver for ended in found.values() for e in ended.values()} == {"docker"}
