"""Kinds of the original format that coder_eval refuses by name: the task fails to load, at the
criterion's line, saying what to use instead, and ``coder-eval plan`` exits 2 before anything runs."""

from __future__ import annotations

from pathlib import Path

from tests.criteria.builders import load_error
from tests.helpers import coder_eval, write_task


def test_uipath_eval_is_refused_with_what_to_use_instead(tmp_path: Path) -> None:
    message = load_error(tmp_path, "- type: uipath_eval\n  eval_set: evals/set.json\n")
    assert "task.yaml:4" in message
    assert "uipath_eval is not supported" in message
    assert "run_command" in message and "score_from_stdout" in message


def test_a_refused_kind_stops_plan_before_anything_runs(tmp_path: Path) -> None:
    body = "task_id: t\ninitial_prompt: p\nsuccess_criteria:\n  - type: uipath_eval\n"
    write_task(tmp_path, body)
    result = coder_eval("plan", "task.yaml", cwd=tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "uipath_eval is not supported" in result.stderr
