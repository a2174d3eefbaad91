"""The tests' forked ``coder-eval`` commands (``tests/cli_fork.py``) answer as fresh interpreters do."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests import cli_fork
from tests.helpers import EXAMPLES, coder_eval, write_task

SLOW = """
task_id: slow
initial_prompt: wait
agent: {kind: command, command: "sleep 60"}
sandbox: {driver: tempdir}
success_criteria:
  - {type: file_exists, path: never.txt}
"""


def fresh(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return coder_eval(*args, cwd=cwd, env={**os.environ, "CODER_EVAL_TEST_FORK": "0"})


def forked(*args: str, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1"}
    done = cli_fork.run(args, cwd, env, timeout)
    assert done is not None, "the fork server did not take the command"
    return done


@pytest.mark.parametrize(
    "args",
    [
        ("plan", str(EXAMPLES)),
        ("validate", str(EXAMPLES / "write_file.yaml")),
        ("run", "no-such-folder"),
        ("show", "runs/latest"),
        ("no-such-command",),
    ],
)
def test_a_forked_command_prints_and_exits_as_a_fresh_one(args: tuple[str, ...], tmp_path: Path) -> None:
    want = fresh(*args, cwd=tmp_path)
    got = forked(*args, cwd=tmp_path)
    assert (got.returncode, got.stdout, got.stderr) == (want.returncode, want.stdout, want.stderr)


def test_a_forked_run_writes_its_run_in_its_own_folder_and_environment(tmp_path: Path) -> None:
    write_task(
        tmp_path / "tasks",
        "task_id: t\ninitial_prompt: x\nreference_solution: echo ok > ok.txt\n"
        "success_criteria: [{type: file_contains, path: ok.txt, includes: [ok]}]\n",
    )
    env = {
        **os.environ,
        "COLUMNS": "200",
        "NO_COLOR": "1",
        "CODER_EVAL_STORE": str(tmp_path / "store.duckdb"),
    }
    done = cli_fork.run(("run", "tasks", "--agent", "oracle", "--no-report"), tmp_path, env, 300)
    assert done is not None and done.returncode == 0, done and done.stderr
    assert (tmp_path / "runs" / "latest" / "run.json").is_file()
    assert (tmp_path / "store.duckdb").is_file()  # the command's environment, not the server's


def test_a_command_past_its_timeout_is_killed_and_the_next_one_runs(tmp_path: Path) -> None:
    write_task(tmp_path / "tasks", SLOW)
    with pytest.raises(subprocess.TimeoutExpired):
        forked("run", "tasks", "--no-report", cwd=tmp_path, timeout=3)
    assert forked("--version", cwd=tmp_path).returncode == 0


def test_a_command_with_other_start_up_variables_is_not_forked(tmp_path: Path) -> None:
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1"}
    assert cli_fork.run(("--version",), tmp_path, env, 60) is not None
    assert cli_fork.run(("--version",), tmp_path, {**env, "COLUMNS": "60"}, 60) is None
    assert cli_fork.run(("--version",), tmp_path, {**env, "PYTHONIOENCODING": "ascii"}, 60) is None
