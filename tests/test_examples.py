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


@pytest.mark.slow
def test_scripted_claude_code_example_reads_top_to_bottom(suite: Path) -> None:
    """The real Claude Code CLI against the scripted model: reproduce, read, edit, check, answer."""
    result = coder_eval("run", "examples/scripted_fix.yaml", "--no-report", cwd=suite)
    assert result.returncode == 0, result.stderr
    shown = coder_eval("show", "runs/latest", "scripted-calc-fix--default--r0", cwd=suite).stdout
    steps = [line.strip() for line in shown.splitlines() if line.startswith("  → ")]
    assert steps == [
        "→ Bash: python -c 'import calc; print(calc.add(2, 3))'",
        "→ Read: calc/core.py",
        "→ Edit: calc/core.py",
        "→ Bash: python -c 'import calc; print(calc.add(2, 3))'",
    ]
    assert "  agent claude-code, model scripted (scripted)" in shown
    assert "criterion hidden-tests (hidden_tests): pass" in shown
    *_, end, note = shown.splitlines()  # the end, then its note
    assert end.startswith("= pass (completed)")
    assert note.startswith("  note: scripted model: no price, so the episode costs $0")
