"""baseline_judge: seeded presentation order, recorded, and verdicts mapped back through it."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from coder_eval.criteria import GradingContext
from coder_eval.criteria.judges import panel
from coder_eval.criteria.judges.baseline_judge import presentation_order
from coder_eval.episode.plan import EpisodePlan
from coder_eval.episode.runner import run_episode
from coder_eval.errors import GraderError
from coder_eval.run_dir import RunDir
from coder_eval.sandbox import FakeSandbox
from coder_eval.task import load_tasks
from coder_eval.trajectory import Event
from tests.criteria.builders import Transcript, criterion, evaluate, load_error
from tests.helpers import write_task

CANDIDATE = Transcript().bash("python -m pytest -q").say("All 12 tests pass.").events
REFERENCE = "assistant: I edited calc.py but did not run the tests.\n"
SEEDS = range(12)


@pytest.fixture(autouse=True)
def no_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(panel, "RETRY_BACKOFF_S", 0.0)


def comparison(better: str) -> list[dict[str, Any]]:
    """The blocks of a scripted comparison answer."""
    return [{"tool_use": {"name": "submit_comparison", "input": {"better": better, "rationale": "r"}}}]


def in_block(position: str, text: str) -> str:
    """A regex: ``text`` inside the untrusted transcript shown at ``position`` (first or second)."""
    return rf'(?s)<untrusted_data source="transcript:{position}">(?:(?!</untrusted_data>).)*{text}'


def judge(
    turns: list[dict[str, Any]], reference: dict[str, str] | None = None, **fields: Any
) -> dict[str, Any]:
    return {
        "type": "baseline_judge",
        "reference": reference or {"file": "reference.txt"},
        "model": "scripted",
        "scripted": {"turns": turns},
        **fields,
    }


def ctx_for(task_dir: Path, seed: int, events: list[Event] | None = None) -> GradingContext:
    (task_dir / "reference.txt").write_text(REFERENCE)
    return GradingContext(FakeSandbox(), events or CANDIDATE, task_dir, seed=seed)


def test_order_is_seeded_recorded_and_both_orders_occur(tmp_path: Path) -> None:
    spec = criterion(judge([{"blocks": comparison("tie")}], votes=1))
    orders = [evaluate(spec, ctx_for(tmp_path, seed)).details["order"] for seed in SEEDS]
    assert orders == [list(presentation_order(seed)) for seed in SEEDS]
    assert evaluate(spec, ctx_for(tmp_path, 3)).details["order"] == orders[3]
    assert {tuple(o) for o in orders} == {("candidate", "reference"), ("reference", "candidate")}


def test_a_judge_that_finds_the_tested_run_better_passes_it_in_either_order(tmp_path: Path) -> None:
    turns = [
        {"when": {"request_matches": in_block("first", "tests pass")}, "blocks": comparison("first")},
        {"when": {"request_matches": in_block("second", "tests pass")}, "blocks": comparison("second")},
    ]
    spec = criterion(judge(turns))
    for seed in SEEDS:
        result = evaluate(spec, ctx_for(tmp_path, seed))
        assert (result.passed, result.score) == (True, 1.0)
        expected = "first" if result.details["order"][0] == "candidate" else "second"
        assert {v["better"] for v in result.details["votes"]} == {expected}
        assert {v["winner"] for v in result.details["votes"]} == {"candidate"}


def test_position_answers_map_back_through_the_order(tmp_path: Path) -> None:
    spec = criterion(judge([{"blocks": comparison("first")}]))
    for seed in SEEDS:
        result = evaluate(spec, ctx_for(tmp_path, seed))
        assert result.passed is (result.details["order"][0] == "candidate")
        assert result.score == (1.0 if result.passed else 0.0)


def test_a_tie_passes_with_half_score(tmp_path: Path) -> None:
    result = evaluate(criterion(judge([{"blocks": comparison("tie")}])), ctx_for(tmp_path, 0))
    assert (result.passed, result.score) == (True, 0.5)
    assert [v["winner"] for v in result.details["votes"]] == ["tie"] * 3


def test_an_invalid_comparison_is_retried_then_a_grader_error(tmp_path: Path) -> None:
    spec = criterion(judge([{"blocks": comparison("both")}], max_retries=2))
    with pytest.raises(GraderError, match="3 attempts failed; last: invalid answer"):
        evaluate(spec, ctx_for(tmp_path, 0))


def test_the_reference_can_be_an_episode_of_an_earlier_run(tmp_path: Path) -> None:
    task_path = write_task(
        tmp_path,
        """
        task_id: earlier
        initial_prompt: write ok
        reference_solution: echo WROTE-THE-FILE > ok.txt
        agent: {kind: oracle}
        success_criteria: [{type: file_exists, path: ok.txt}]
        """,
    )
    plan = EpisodePlan(load_tasks([task_path])[0])
    asyncio.run(run_episode(plan, "r1", RunDir(tmp_path / "runs" / "r1").episode_path(plan.episode_id)))
    turns = [{"when": {"request_contains": "echo WROTE-THE-FILE > ok.txt"}, "blocks": comparison("tie")}]
    reference = {"run": "runs/r1", "episode_id": plan.episode_id}
    result = evaluate(criterion(judge(turns, reference)), ctx_for(tmp_path, 0))
    assert (result.passed, result.score) == (True, 0.5)
    assert result.details["reference"].endswith(f"episodes/{plan.episode_id}.jsonl")


def test_a_missing_reference_is_a_grader_error(tmp_path: Path) -> None:
    spec = criterion(judge([], {"file": "nowhere.jsonl"}))
    with pytest.raises(GraderError, match=r"nowhere\.jsonl not found"):
        evaluate(spec, ctx_for(tmp_path, 0))


def test_the_reference_needs_one_source(tmp_path: Path) -> None:
    message = "give either 'file', or 'run' together with 'episode_id'"
    assert message in load_error(tmp_path, "- type: baseline_judge\n  reference: {file: a, run: b}")
    assert message in load_error(tmp_path, "- type: baseline_judge\n  reference: {run: b}")
