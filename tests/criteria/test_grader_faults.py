"""Graders see the suite's own files on every driver; a grader's own fault is ``invalid``, never a fail."""

from __future__ import annotations

import asyncio
import textwrap
from pathlib import Path

import pytest

from coder_eval.episode.plan import EpisodePlan
from coder_eval.episode.runner import run_episode
from coder_eval.task import load_tasks
from coder_eval.trajectory import CriterionResult, EpisodeEnd, read_trajectory
from tests.sandbox.builders import DRIVER_NAMES, needs_bwrap

CHECK = """
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "graders"))
from common import EXPECTED
sys.exit(0 if open("answer.txt").read().strip() == EXPECTED else 1)
"""

TASK = """
task_id: answer-{driver}
initial_prompt: Write 42 to answer.txt.
sandbox: {{driver: {driver}}}
reference_solution: echo 42 > answer.txt
success_criteria:
  - {{id: shared, type: run_command, command: 'python "$TASK_DIR/../checks/{script}"'}}
"""


def team_suite(root: Path, driver: str, script: str = "check.py") -> Path:
    """``graders/common.py`` (shared), ``checks/check.py`` importing it from ``../graders``, and a task
    in ``tasks/`` naming the check through ``$TASK_DIR/../checks/``."""
    for folder in ("graders", "checks", "tasks"):
        (root / folder).mkdir(parents=True, exist_ok=True)
    (root / "graders" / "common.py").write_text('EXPECTED = "42"\n')
    (root / "checks" / "check.py").write_text(textwrap.dedent(CHECK))
    path = root / "tasks" / f"{driver}.yaml"
    path.write_text(TASK.format(driver=driver, script=script))
    return path


def episode(path: Path, kind: str) -> tuple[EpisodeEnd, CriterionResult]:
    (task,) = load_tasks([path], {"agent": {"kind": kind}})
    out = path.with_suffix(f".{kind}.jsonl")
    end = asyncio.run(run_episode(EpisodePlan(task), "graders", out))
    (verdict,) = [e for e in read_trajectory(out).events if isinstance(e, CriterionResult)]
    return end, verdict


@pytest.mark.parametrize("driver", DRIVER_NAMES)
def test_a_grader_importing_a_shared_module_beside_the_task_folder(tmp_path: Path, driver: str) -> None:
    path = team_suite(tmp_path, driver)

    solved, _ = episode(path, "oracle")
    unsolved, verdict = episode(path, "none")

    assert (solved.outcome, unsolved.outcome) == ("pass", "fail"), (solved.error, verdict.details)


@pytest.mark.parametrize("driver", DRIVER_NAMES)
def test_a_missing_grader_file_is_invalid_with_its_reason(tmp_path: Path, driver: str) -> None:
    path = team_suite(tmp_path, driver, script="chek.py")

    end, verdict = episode(path, "oracle")

    assert (end.outcome, end.status) == ("invalid", "grader_error")
    assert (
        f"the grader's file $TASK_DIR/../checks/chek.py ({tmp_path / 'checks' / 'chek.py'}) does not exist"
        in (verdict.error or "")
    )


@pytest.mark.parametrize("driver", DRIVER_NAMES)
def test_a_grader_or_its_module_that_does_not_compile_is_invalid(tmp_path: Path, driver: str) -> None:
    path = team_suite(tmp_path, driver)
    (tmp_path / "graders" / "common.py").write_text('EXPECTED = "42\n')

    end, verdict = episode(path, "none")

    assert (end.outcome, end.status) == ("invalid", "grader_error")
    assert f"the grader's {tmp_path / 'graders' / 'common.py'} does not compile" in (verdict.error or "")


@pytest.mark.parametrize(
    "driver", [pytest.param("bwrap", marks=needs_bwrap), pytest.param("docker", marks=pytest.mark.docker)]
)
def test_a_grader_file_the_verifier_cannot_read_is_invalid(tmp_path: Path, driver: str) -> None:
    """Without capabilities (bwrap, docker) a file nobody may read is unreadable, as root too."""
    path = team_suite(tmp_path, driver)
    (tmp_path / "graders" / "common.py").chmod(0)

    end, verdict = episode(path, "oracle")

    assert (end.outcome, end.status) == ("invalid", "grader_error")
    assert "the verifier cannot read the grader's" in (verdict.error or "")
    assert str(tmp_path / "graders" / "common.py") in (verdict.error or "")


def test_a_grader_that_fails_on_the_agents_work_is_the_agents_fail(tmp_path: Path) -> None:
    """A traceback a grader prints could be the code under test's: it stays a graded failure."""
    path = team_suite(tmp_path, "tempdir")

    end, verdict = episode(path, "none")  # answer.txt missing: the grader raises FileNotFoundError

    assert (end.outcome, verdict.error) == ("fail", None)
    assert "FileNotFoundError" in verdict.details["output"]
