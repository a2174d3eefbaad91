"""The grader self-test: the oracle must pass every task, the none agent must fail it."""

from __future__ import annotations

import asyncio
from pathlib import Path

from coder_eval.run.validate import validate_tasks
from coder_eval.task import load_tasks
from tests.helpers import EXAMPLES, coder_eval, minimal_task, write_task


def test_example_suite_is_sound() -> None:
    result = coder_eval("validate", str(EXAMPLES), cwd=EXAMPLES.parent.parent)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.count(" ok ") >= 5


def test_grader_that_passes_an_empty_run_is_broken(tmp_path: Path) -> None:
    write_task(
        tmp_path,
        """
        task_id: lenient
        initial_prompt: write a report
        reference_solution: echo report > report.txt
        success_criteria:
          - {type: file_contains, path: "*.txt", excludes: [error], weight: 0}
          - {type: run_command, command: "true"}
        """,
    )
    result = coder_eval("validate", str(tmp_path), cwd=tmp_path)
    assert result.returncode == 1
    assert "passes when the agent does nothing" in result.stdout


def test_reference_solution_that_fails_is_broken(tmp_path: Path) -> None:
    minimal_task(tmp_path, "wrong")
    (tmp_path / "wrong.yaml").write_text(
        (tmp_path / "wrong.yaml").read_text().replace("echo ok", "echo nope")
    )
    (check,) = asyncio.run(validate_tasks(load_tasks([tmp_path])))
    assert not check.ok
    assert check.verdict.startswith("broken: the reference solution does not pass")


def test_sound_task_is_ok(tmp_path: Path) -> None:
    (check,) = asyncio.run(validate_tasks(load_tasks([minimal_task(tmp_path)])))
    assert (check.oracle, check.none, check.ok) == ("pass", "fail", True)


def test_label_rows_without_reference_skip_the_oracle_and_negatives_may_pass(tmp_path: Path) -> None:
    write_task(
        tmp_path,
        """
        task_id: triggers
        initial_prompt: "${row.prompt}"
        dataset:
          rows:
            - {id: pos, prompt: "publish the page", skill: sitectl}
            - {id: neg, prompt: "fix the tests", skill: ""}
        success_criteria:
          - {type: skill_triggered, skill: sitectl, expected_skill: "${row.skill}"}
        """,
    )
    checks = {c.task_id: c for c in asyncio.run(validate_tasks(load_tasks([tmp_path])))}
    assert checks["triggers.pos"].oracle == "skipped"
    assert (checks["triggers.pos"].none, checks["triggers.pos"].ok) == ("fail", True)
    assert (checks["triggers.neg"].none, checks["triggers.neg"].ok) == ("pass", True)
    assert "negative row" in checks["triggers.neg"].verdict


def test_task_whose_none_run_passes_without_labels_is_still_broken(tmp_path: Path) -> None:
    write_task(
        tmp_path,
        "task_id: t\ninitial_prompt: p\nsuccess_criteria:\n  - {type: run_command, command: 'true'}\n",
    )
    (check,) = asyncio.run(validate_tasks(load_tasks([tmp_path])))
    assert (check.oracle, check.ok) == ("skipped", False)
    assert check.verdict == "broken: passes when the agent does nothing"
