"""The end of ``coder-eval run``: totals per variant, why episodes did not pass, the exit code for what
was measured (5: nothing), ``--require-all-pass``, and how to resume after Ctrl-C."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from coder_eval.trajectory import read_trajectory
from tests.experiment.builders import two_tasks, write_experiment
from tests.helpers import coder_eval, flagged_task, minimal_task, write_task

AB = """
experiment_id: ab
variants:
  - {variant_id: oracle, agent: {kind: oracle}}
  - {variant_id: nothing, agent: {kind: none}}
"""

BROKEN_SETUP = """
task_id: broken
initial_prompt: Do it.
agent: {kind: oracle}
reference_solution: touch x
sandbox: {driver: tempdir}
pre_run: [{command: "echo 'no credentials found' >&2; exit 3", fail_on_error: true}]
success_criteria:
  - {type: file_exists, path: x}
"""
"""A task whose set-up fails: the harness measured nothing (an agent's own crash is its fail)."""


def row(stdout: str, variant: str) -> list[str]:
    """The cells of ``variant``'s row in the totals table."""
    line = next(line for line in stdout.splitlines() if re.match(rf"^│ {variant}\s+│", line))
    return [cell.strip() for cell in line.strip("│").split("│")]


def test_the_end_of_a_run_gives_totals_per_variant_and_why_episodes_did_not_pass(tmp_path: Path) -> None:
    two_tasks(tmp_path)
    write_experiment(tmp_path, AB)
    result = coder_eval(
        "run", "tasks", "-e", "experiment.yaml", "--run-dir", "run", "--no-report", cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("run: run  pass 2  fail 2  invalid 0")
    assert row(result.stdout, "oracle")[1:4] == ["2", "0", "0"]
    assert row(result.stdout, "nothing")[1:4] == ["0", "2", "0"]
    assert row(result.stdout, "nothing")[-1].endswith(" s")
    assert "not passed: 2 of 4 episodes (each in full: coder-eval show run EPISODE)" in result.stdout
    assert (
        "  fail     a--nothing--r0 (+1 like it): 0-file_contains: no file matches 'ok.txt'" in result.stdout
    )


def test_a_run_in_which_nothing_was_measured_exits_5_with_the_reasons(tmp_path: Path) -> None:
    write_task(tmp_path / "tasks", BROKEN_SETUP)
    result = coder_eval("run", "tasks", "--repeats", "2", "--run-dir", "run", cwd=tmp_path)
    assert result.returncode == 5, result.stdout + result.stderr
    assert "run: run  pass 0  fail 0  invalid 2" in result.stdout
    reason = (
        """infra_error: pre_run "echo 'no credentials found' >&2; exit 3" exited 3: no credentials found"""
    )
    assert f"  invalid  broken--default--r0 (+1 like it): {reason}" in result.stdout
    assert "nothing was measured: all 2 finished episodes are invalid" in result.stderr
    assert "reports not rendered: nothing was measured" in result.stderr
    assert not (tmp_path / "reports").exists()


def test_a_model_that_refuses_the_key_is_a_run_that_measured_nothing(tmp_path: Path) -> None:
    """The real Claude Code CLI against a model server that answers 401, as a missing key does."""
    task = """
    task_id: no-key
    initial_prompt: Do the task.
    agent: {kind: claude-code, model: scripted, permission_mode: bypassPermissions}
    scripted:
      model: claude-sonnet-4-5
      turns:
        - error: {kind: auth}
    success_criteria:
      - {type: file_exists, path: x}
    """
    write_task(tmp_path / "tasks", task)
    result = coder_eval("run", "tasks", "--run-dir", "run", "--no-report", cwd=tmp_path)
    assert result.returncode == 5, result.stdout + result.stderr
    (line,) = [
        line for line in result.stdout.splitlines() if line.startswith("  invalid  no-key--default--r0")
    ]
    assert "model API error" in line and "401" in line


def test_one_measured_episode_is_enough_to_exit_0(tmp_path: Path) -> None:
    write_task(tmp_path / "tasks", BROKEN_SETUP)
    minimal_task(tmp_path / "tasks", "fine", extra="agent: {kind: oracle}\n")
    result = coder_eval("run", "tasks", "--no-report", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "pass 1  fail 0  invalid 1" in result.stdout


def test_require_all_pass_fails_the_run_when_any_episode_did_not_pass(tmp_path: Path) -> None:
    two_tasks(tmp_path)
    write_experiment(tmp_path, AB)
    strict = coder_eval(
        "run", "tasks", "-e", "experiment.yaml", "--no-report", "--require-all-pass", cwd=tmp_path
    )
    assert strict.returncode == 1, strict.stderr
    assert "--require-all-pass: 2 of 4 episodes did not pass" in strict.stderr
    passing = coder_eval(
        "run", "tasks", "--agent", "oracle", "--no-report", "--require-all-pass", cwd=tmp_path
    )
    assert passing.returncode == 0, passing.stderr


def test_ctrl_c_says_how_to_resume_and_that_command_finishes_the_run(tmp_path: Path) -> None:
    flag = tmp_path / "go"
    minimal_task(tmp_path / "tasks", "first", extra="agent: {kind: oracle}\n")
    flagged_task(tmp_path / "tasks", "second", flag)
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1"}
    args = [sys.executable, "-m", "coder_eval", "run", "tasks", "--run-dir", "runs/mine", "--no-report"]
    run = subprocess.Popen(
        args, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    first = tmp_path / "runs" / "mine" / "episodes" / "first--default--r0.jsonl"
    try:
        deadline = time.monotonic() + 120
        while not (first.exists() and read_trajectory(first).end) and time.monotonic() < deadline:
            time.sleep(0.2)
        time.sleep(1)  # the second episode is waiting for the flag
        run.send_signal(signal.SIGINT)
        _, stderr = run.communicate(timeout=60)
    finally:
        if run.poll() is None:
            run.kill()
    assert run.returncode == 130, stderr
    hint = "1 of 2 episodes finished; resume with: coder-eval run --resume --run-dir runs/mine"
    assert hint in stderr
    flag.touch()
    resumed = coder_eval(*hint.partition("resume with: coder-eval ")[2].split(), "--no-report", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert "pass 2  fail 0  invalid 0  (kept 1 finished)" in resumed.stdout
