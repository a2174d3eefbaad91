"""Outcome and verdict changes between a run and its re-grade, and finding the run it came from."""

from __future__ import annotations

from pathlib import Path

import pytest

from coder_eval.analysis import load_runs
from coder_eval.analysis.answer.changes import criterion_changes, outcome_changes, regraded_source
from coder_eval.run.render import render_report
from tests.regrade.builders import greet_task, make_run, regrade


@pytest.fixture
def runs(tmp_path: Path) -> tuple[Path, Path]:
    """A run of two tasks, and its re-grade with one criterion made stricter."""
    counter = tmp_path / "c"
    greet_task(tmp_path / "tasks", "a", counter=counter)
    greet_task(tmp_path / "tasks", "b", counter=counter)
    source = make_run(tmp_path / "runs", [tmp_path / "tasks"])
    stricter = greet_task(tmp_path / "now", "a", counter=counter, includes=["ok", "more"])
    return source.path, regrade(source, tmp_path / "runs" / "after", [stricter]).run.path


def test_outcome_and_criterion_changes_pair_the_same_episodes(runs: tuple[Path, Path]) -> None:
    before, after = (load_runs(path) for path in runs)
    outcomes = outcome_changes(before.episodes, after.episodes)
    assert outcomes[["episode_id", "outcome_before", "outcome_after", "changed"]].values.tolist() == [
        ["a--default--r0", "pass", "fail", True],
        ["b--default--r0", "pass", "pass", False],
    ]
    verdicts = criterion_changes(before.criteria, after.criteria)
    changed = verdicts[verdicts.changed]
    assert changed[["episode_id", "criterion_id", "score_before", "score_after"]].values.tolist() == [
        ["a--default--r0", "words", 1.0, 0.5]
    ]
    assert len(verdicts) == 4


def test_regraded_source_reads_the_manifest(runs: tuple[Path, Path]) -> None:
    source, after = runs
    assert regraded_source(after) == source and regraded_source(source) is None
    assert regraded_source(source / "episodes") is None


@pytest.mark.slow
def test_the_run_report_of_a_regraded_run_shows_what_changed(runs: tuple[Path, Path], tmp_path: Path) -> None:
    result = render_report([runs[1]], "run_report", out_dir=tmp_path / "report")
    assert result.ok, result.error
    page = result.html_path.read_text(encoding="utf-8")
    assert "Re-graded" in page and "no agent ran again" in page
    assert "1 episodes changed outcome; 1 criterion verdicts changed" in page
