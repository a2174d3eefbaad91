"""The example suite end to end through the CLI: the oracle passes everything, doing nothing fails it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from coder_eval.task import load_tasks
from coder_eval.trajectory import read_trajectory
from tests.helpers import EXAMPLES, coder_eval


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    shutil.copytree(EXAMPLES, tmp_path / "examples")
    return tmp_path


@pytest.mark.parametrize(("agent", "outcome"), [("oracle", "pass"), ("none", "fail")])
def test_run_examples(suite: Path, agent: str, outcome: str) -> None:
    result = coder_eval(
        "run", "examples", "--agent", agent, "--repeats", "2", "-j", "4", "--no-report", cwd=suite
    )
    assert result.returncode == 0, result.stderr
    run = (suite / "runs" / "latest").resolve()
    trajectories = [read_trajectory(p) for p in sorted((run / "episodes").glob("*.jsonl"))]
    n_tasks = len(load_tasks([suite / "examples"]))
    assert len(trajectories) == 2 * n_tasks
    assert {t.end.outcome for t in trajectories if t.end} == {outcome}
    assert all(t.complete and not t.problems for t in trajectories)
    assert (run / "run.json").is_file()
