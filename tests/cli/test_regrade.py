"""``coder-eval regrade`` as a user runs it: the change table, the new run, and refusals (exit 2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import coder_eval, write_task

TASK = """
task_id: greet
initial_prompt: write ok to ok.txt
reference_solution: echo ok > ok.txt
success_criteria:
  - {id: words, type: file_contains, path: ok.txt, includes: [ok]}
"""


@pytest.fixture
def recorded(tmp_path: Path) -> Path:
    """A run of one task under the oracle and the none agent: ``runs/source``."""
    task = write_task(tmp_path / "tasks", TASK, "greet.yaml")
    experiment = write_task(
        tmp_path,
        """
        experiment_id: two
        variants:
          - {variant_id: oracle, agent: {kind: oracle}}
          - {variant_id: idle, agent: {kind: none}}
        """,
        "experiment.yaml",
    )
    ran = coder_eval(
        "run", str(task), "-e", str(experiment), "--run-dir", "runs/source", "--no-report", cwd=tmp_path
    )
    assert ran.returncode == 0, ran.stderr
    return tmp_path


def test_regrade_prints_what_changed_and_writes_a_new_run(recorded: Path) -> None:
    stricter = write_task(
        recorded / "now", TASK.replace("includes: [ok]", "includes: [ok, bye]"), "greet.yaml"
    )
    result = coder_eval(
        "regrade", "runs/source", str(stricter), "--run-dir", "runs/stricter", "--no-report", cwd=recorded
    )
    assert result.returncode == 0, result.stderr
    assert "greet--oracle--r0: pass -> fail" in result.stdout
    assert "2 episodes, 1 changed outcome" in result.stdout
    manifest = json.loads((recorded / "runs/stricter/run.json").read_text())
    assert manifest["regraded_from"]["outcomes_after"] == {"fail": 2}
    assert manifest["variants"] == ["oracle", "idle"] and manifest["command"][1:3] == [
        "regrade",
        "runs/source",
    ]
    assert (recorded / "runs/latest").resolve() == (recorded / "runs/stricter").resolve()


def test_resume_refuses_a_regraded_run(recorded: Path) -> None:
    assert (
        coder_eval("regrade", "runs/source", "--run-dir", "runs/r", "--no-report", cwd=recorded).returncode
        == 0
    )
    resumed = coder_eval("run", "--resume", "--run-dir", "runs/r", cwd=recorded)
    assert resumed.returncode == 2
    assert "was made by coder-eval regrade" in resumed.stderr and "never run again" in resumed.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["runs/source", "--run-dir", "runs/source"], "already exists; choose a new --run-dir"),
        (["tasks", "--run-dir", "runs/x"], "not a run directory"),
        (["runs/source", "missing.yaml", "--run-dir", "runs/x"], "missing.yaml: no such file or directory"),
        (["runs/source", "--run-dir", "runs/x", "-j", "0"], "Invalid value for '-j'"),
    ],
)
def test_bad_input_exits_2_and_writes_nothing(recorded: Path, args: list[str], message: str) -> None:
    result = coder_eval("regrade", *args, "--no-report", cwd=recorded)
    assert result.returncode == 2, result.stderr
    assert message in result.stderr
    assert not (recorded / "runs" / "x").exists()
