"""Sorting an episode's criteria for re-grading, and what its judges cost."""

from __future__ import annotations

from pathlib import Path

from coder_eval.regrade.criteria_plan import evaluation_cost, split_criteria
from coder_eval.task import load_tasks
from coder_eval.trajectory import CriterionResult
from tests.helpers import write_task

from .test_tasks import start_of

TASK = """
task_id: s
initial_prompt: p
success_criteria:
  - {id: file, type: file_exists, path: a.txt}
  - {id: said, type: message_matches, pattern: done}
  - {type: file_contains, path: a.txt, includes: [x]}
"""


def result(criterion_id: str, passed: bool = True, **details: object) -> CriterionResult:
    return CriterionResult(
        criterion_id=criterion_id, kind="k", score=float(passed), passed=passed, details=details
    )


def test_with_a_snapshot_every_criterion_runs_again(tmp_path: Path) -> None:
    (task,) = load_tasks([write_task(tmp_path, TASK)])
    split = split_criteria(task, start_of(task), [], has_snapshot=True)
    assert [c.id for c in split.to_run] == ["file", "said", "2-file_contains"]  # ids made explicit
    assert split.kept == split.missing == {}


def test_without_one_unchanged_workspace_criteria_keep_their_verdict_and_changed_ones_are_errors(
    tmp_path: Path,
) -> None:
    (recorded,) = load_tasks([write_task(tmp_path, TASK)])
    (current,) = load_tasks([write_task(tmp_path / "now", TASK.replace("includes: [x]", "includes: [y]"))])
    old = [result("file"), result("said"), result("2-file_contains")]
    split = split_criteria(
        current, start_of(recorded), old, has_snapshot=False, why_no_snapshot="the run kept none"
    )
    assert [c.id for c in split.to_run] == ["said"]  # needs only the trajectory
    assert split.kept == {"file": old[0]}
    error = split.missing["2-file_contains"].error or ""
    assert "no workspace snapshot (the run kept none)" in error and "differs from the criterion" in error
    assert [r.criterion_id for r in split.merged([result("said", passed=False)])] == [
        "file",
        "said",
        "2-file_contains",
    ]


def test_a_workspace_criterion_the_run_never_graded_is_not_guessed(tmp_path: Path) -> None:
    (task,) = load_tasks([write_task(tmp_path, TASK)])
    split = split_criteria(task, start_of(task), [result("said")], has_snapshot=False)
    assert sorted(split.missing) == ["2-file_contains", "file"] and split.kept == {}


def test_evaluation_cost_sums_the_votes_and_is_unknown_when_one_price_is() -> None:
    priced = [result("j", votes=[{"cost_usd": 0.01}, {"cost_usd": 0.02}]), result("f")]
    assert evaluation_cost(priced) == 0.03
    assert evaluation_cost([*priced, result("k", votes=[{"cost_usd": None}])]) is None
