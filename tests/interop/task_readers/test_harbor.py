"""Harbor task directories, built and checked by the ``harbor`` package itself, load and run as tasks.

Each directory is made by ``harbor init`` in harbor's own venv (``harbor_build.py``), filled in, and
accepted by harbor's ``Task`` loader before coder_eval reads it. Beside them, Terminal-Bench-style
tasks of our own in Harbor's layout (``fixtures/harbor``): a Python task whose tests open ``/app/...``,
a shell task using ``${APP_DIR:-/app}``, and one whose ``test.sh`` exits before writing its reward;
and the Terminal-Bench layout's tasks converted by Harbor's own mapper.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from coder_eval.criteria.reward_file import RewardFile
from coder_eval.errors import TaskError
from coder_eval.task import load_tasks
from coder_eval.trajectory import CriterionResult, PhaseEvent, read_trajectory
from tests.helpers import coder_eval, write_task
from tests.interop.harbor_venv import run
from tests.interop.task_readers.builders import FIXTURES, outcomes, run_tasks, with_dockerfiles
from tests.sandbox.builders import needs_bwrap

BUILD = Path(__file__).parent.parent / "harbor_build.py"
MAP = Path(__file__).parent.parent / "harbor_map.py"
HELLO: dict[str, Any] = {
    "name": "acme/hello",
    "instruction": "<!-- harbor-canary GUID 26b5c67b -->\n\nWrite hello to /app/hello.txt.\n",
    "solve": "#!/bin/bash\ncp /solution/answer.txt /app/hello.txt\n\necho solved\n",
    "solution_files": {"answer.txt": "hello\n"},
    "test": (
        "#!/bin/bash\n"
        "if python3 /tests/check.py; then echo 1 > /logs/verifier/reward.txt\n"
        'else echo 0 > "/logs/verifier/reward.txt"; fi\n'
    ),
    "test_files": {"check.py": "import sys\nsys.exit(open('hello.txt').read().strip() != 'hello')\n"},
    "environment_files": {"NOTES.md": "The greeting goes in hello.txt.\n"},
    "dockerfile": False,
    "agent_timeout": 90,
    "verifier_timeout": 45,
    "workdir": "/app",
}

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]


def build(harbor_python: Path, out: Path, **spec: Any) -> Path:
    """A Harbor task directory made by harbor, and checked valid by harbor's own loader."""
    path = out.parent / f"{out.name}.json"
    path.write_text(json.dumps({**HELLO, **spec, "out": str(out)}))
    made = run(harbor_python, BUILD, path)
    assert made.returncode == 0, made.stderr
    report = json.loads(made.stdout)
    assert report["valid"], report
    return Path(report["task_dir"])


@pytest.fixture(scope="module")
def hello(harbor_python: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build(harbor_python, tmp_path_factory.mktemp("harbor") / "tasks")


def test_a_harbor_task_maps_prompt_oracle_verifier_and_timeouts(hello: Path) -> None:
    (task,) = load_tasks([hello])
    assert task.task_id == "acme.hello" and "harbor" in task.tags
    assert task.prompt == "Write hello to /app/hello.txt.\n"  # the canary line is not shown to the agent
    assert task.run_limits.task_timeout == 90
    (criterion,) = task.success_criteria
    assert isinstance(criterion, RewardFile) and criterion.timeout == 45
    assert task.hidden_tests is not None and Path(task.hidden_tests.path) == hello / "tests"
    assert task.reference_script is not None and "solve.sh" in task.reference_script
    assert task.source_dir == hello and task.sandbox.driver == "auto" and task.sandbox.network == "host"
    assert task.hidden_tests.mount_point == "/tests" and task.sandbox.workdir == "/app"
    assert task.container_paths() == [
        "/app", "/tests", "/solution", "/logs/agent", "/logs/verifier", "/logs/artifacts"
    ]  # fmt: skip


def test_the_oracle_passes_doing_nothing_fails_and_the_reward_is_the_score(
    hello: Path, tmp_path: Path
) -> None:
    result = coder_eval("validate", str(hello), cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "acme.hello" in result.stdout and "ok" in result.stdout
    ran = coder_eval(
        "run", str(hello.parent), "--agent", "oracle", "--run-dir", "runs/r", "--no-report", cwd=tmp_path
    )
    assert ran.returncode == 0, ran.stderr
    (trajectory,) = [read_trajectory(p) for p in (tmp_path / "runs/r/episodes").glob("*.jsonl")]
    (verdict,) = [e for e in trajectory.events if isinstance(e, CriterionResult)]
    assert (verdict.score, verdict.passed, verdict.details["rewards"]) == (1.0, True, {"reward": 1.0})
    assert trajectory.end is not None and trajectory.end.final_message == "solved"


def test_a_reward_json_wins_and_its_reward_value_is_the_score(harbor_python: Path, tmp_path: Path) -> None:
    test = (
        "#!/bin/bash\n"
        "echo 0 > /logs/verifier/reward.txt\n"
        'echo \'{"reward": 0.25, "style": 1}\' > /logs/verifier/reward.json\n'
    )
    task_dir = build(harbor_python, tmp_path / "tasks", name="acme/partial", test=test)
    ran = coder_eval(
        "run", str(task_dir), "--agent", "oracle", "--run-dir", "runs/r", "--no-report", cwd=tmp_path
    )
    assert ran.returncode == 0, ran.stderr
    (trajectory,) = [read_trajectory(p) for p in (tmp_path / "runs/r/episodes").glob("*.jsonl")]
    (verdict,) = [e for e in trajectory.events if isinstance(e, CriterionResult)]
    assert (verdict.score, verdict.passed) == (0.25, False)
    assert verdict.details["rewards"] == {"reward": 0.25, "style": 1.0}


@pytest.mark.docker
def test_a_dockerfile_task_runs_in_its_own_image(harbor_python: Path, tmp_path: Path) -> None:
    """environment/Dockerfile becomes the docker driver's image, built from the task's environment
    folder (offline, from the default image); the oracle passes in it and doing nothing fails."""
    task_dir = build(harbor_python, tmp_path / "tasks", name="acme/boxed", dockerfile=True)
    (task_dir / "environment" / "Dockerfile").write_text(
        "FROM coder-eval/base\nCOPY NOTES.md /opt/notes/NOTES.md\nWORKDIR /app\n", encoding="utf-8"
    )
    (task,) = load_tasks([task_dir])
    assert task.sandbox.driver == "docker"
    ran = coder_eval(
        "run", str(task_dir), "--agent", "oracle", "--run-dir", "runs/r", "--no-report", cwd=tmp_path
    )
    assert ran.returncode == 0, ran.stderr
    idle = coder_eval(
        "run", str(task_dir), "--agent", "none", "--run-dir", "runs/idle", "--no-report", cwd=tmp_path
    )
    assert idle.returncode in (0, 1), idle.stderr
    verdicts = {}
    for run_dir in ("r", "idle"):
        (trajectory,) = [
            read_trajectory(p) for p in (tmp_path / "runs" / run_dir / "episodes").glob("*.jsonl")
        ]
        phases = [e for e in trajectory.events if isinstance(e, PhaseEvent) and e.name == "agent"]
        assert phases and phases[0].details["driver"] == "docker"
        (verdict,) = [e for e in trajectory.events if isinstance(e, CriterionResult)]
        verdicts[run_dir] = verdict.passed
    assert verdicts == {"r": True, "idle": False}


def test_a_verifier_image_of_its_own_is_refused_by_name(harbor_python: Path, tmp_path: Path) -> None:
    task_dir = build(harbor_python, tmp_path / "tasks", name="acme/judged", verifier_mode="separate")
    assert (task_dir / "tests" / "Dockerfile").is_file()
    with pytest.raises(
        TaskError, match=r"'acme\.judged': a verifier image of its own \(tests/Dockerfile\) is not supported"
    ):
        load_tasks([task_dir])


def test_multi_step_tasks_and_compose_environments_are_refused(harbor_python: Path, tmp_path: Path) -> None:
    steps = build(harbor_python, tmp_path / "a", name="acme/steps", steps=2, dockerfile=False)
    with pytest.raises(TaskError, match=r"Harbor task 'acme\.steps' has steps"):
        load_tasks([steps])
    compose = build(
        harbor_python,
        tmp_path / "b",
        name="acme/compose",
        environment_files={"docker-compose.yaml": "services: {}\n"},
    )
    with pytest.raises(TaskError, match=r"uses environment/docker-compose\.yaml; Compose is not supported"):
        load_tasks([compose])


def test_folders_mixing_task_files_and_harbor_tasks_are_searched(hello: Path, tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    write_task(suite, "task_id: plain\ninitial_prompt: p\nsuccess_criteria: [{type: file_exists, path: x}]\n")
    shutil.copytree(hello, suite / "harbor" / "hello")
    assert sorted(t.task_id for t in load_tasks([suite])) == ["acme.hello", "plain"]
    assert [t.task_id for t in load_tasks([hello / "task.toml"])] == ["acme.hello"]


def test_a_broken_task_toml_is_named(tmp_path: Path) -> None:
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "task.toml").write_text("[agent]\ntimeout_sec = 'soon'\n")
    with pytest.raises(TaskError, match=r"t/task.toml: agent.timeout_sec: Input should be a valid number"):
        load_tasks([tmp_path / "t"])
    (tmp_path / "t" / "task.toml").write_text("[agent\n")
    with pytest.raises(TaskError, match="cannot read the Harbor task configuration"):
        load_tasks([tmp_path / "t"])


EXPECTED = {  # task -> (the oracle's outcome, doing nothing's outcome)
    "coder-eval.py-word-count": ("pass", "fail"),
    "coder-eval.sh-greeting": ("pass", "fail"),
    "coder-eval.exit-before-reward": ("invalid", "invalid"),
}


@pytest.mark.parametrize(
    "driver", [pytest.param("bwrap", marks=needs_bwrap), pytest.param("docker", marks=pytest.mark.docker)]
)
def test_terminal_bench_style_tasks_run_as_shipped(driver: str, tmp_path: Path) -> None:
    """The oracle passes and doing nothing fails, with every file seeing the task's container paths;
    a test.sh that exits before its reward lines is invalid (grader_error), for either agent."""
    tasks = FIXTURES / "harbor" if driver == "bwrap" else with_dockerfiles(tmp_path / "tasks")
    found = {agent: outcomes(run_tasks(tasks, agent, tmp_path)) for agent in ("oracle", "none")}

    assert {t: (found["oracle"][t].outcome, found["none"][t].outcome) for t in EXPECTED} == EXPECTED
    assert {e.driver for agent in found.values() for e in agent.values()} == {driver}
    for agent in ("oracle", "none"):
        broken = found[agent]["coder-eval.exit-before-reward"]
        assert broken.status == "grader_error" and broken.invalid_cause == "grader"
        assert (
            "wrote no reward file (/logs/verifier/reward.txt or /logs/verifier/reward.json)" in broken.error
        )


@pytest.mark.docker
def test_terminal_bench_tasks_mapped_by_harbor_run_and_its_flaw_is_a_grader_error(
    harbor_python: Path, tmp_path: Path
) -> None:
    """Harbor's own Terminal-Bench mapper appends the reward lines to run-tests.sh: after an ``exit``
    they never run, and Harbor finds no reward (RewardFileNotFoundError); here that task is invalid
    (grader_error) while the others pass with the oracle."""
    mapped = tmp_path / "mapped"
    done = run(harbor_python, MAP, FIXTURES / "terminal_bench", mapped)
    assert done.returncode == 0, done.stderr
    assert sorted(json.loads(done.stdout)["mapped"]) == ["exit-before-reward", "py-word-count", "sh-greeting"]

    found = outcomes(run_tasks(mapped, "oracle", tmp_path))

    assert {t: e.outcome for t, e in found.items()} == {
        "exit-before-reward": "invalid",
        "py-word-count": "pass",
        "sh-greeting": "pass",
    }
    assert found["exit-before-reward"].status == "grader_error"


def test_tempdir_refuses_a_harbor_task_before_it_runs_saying_why(tmp_path: Path) -> None:
    for command in ("plan", "run"):
        task = FIXTURES / "harbor" / "sh-greeting"
        done = coder_eval(command, str(task), "--driver", "tempdir", "--agent", "oracle", cwd=tmp_path)
        assert done.returncode == 2, done.stdout + done.stderr
        assert "cannot show the workspace at /app, nor /tests, /solution, /logs/agent" in done.stderr
        assert "run it on bwrap or docker" in done.stderr
    assert not (tmp_path / "runs").exists()
