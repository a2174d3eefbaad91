"""Why a criterion failed and why an episode did not pass, from what the graders recorded."""

from __future__ import annotations

from typing import Any

import pytest

from coder_eval.failures import EVIDENCE_LINES, criterion_reason, episode_reason, evidence
from coder_eval.trajectory import CriterionResult, EpisodeEnd

PYTEST_OUTPUT = "FF..\n=== FAILURES ===\nE  assert -1 == 5\n=== 2 failed, 2 passed in 0.03s ==="


def verdict(details: dict[str, Any] | None = None, **fields: Any) -> CriterionResult:
    base: dict[str, Any] = {"criterion_id": "c", "kind": "run_command", "score": 0.0, "passed": False}
    return CriterionResult(**{**base, "details": details or {}, **fields})


@pytest.mark.parametrize(
    ("details", "fields", "reason"),
    [
        ({}, {"error": "the grader's tool 'pytest' is not available"}, "grader error: the grader's tool"),
        ({"error": "'report.json' is not a file in the sandbox"}, {}, "'report.json' is not a file"),
        (
            {"failed": ["expect[0] '^deploy'", "expect[1] '^status'"]},
            {},
            "failed: expect[0] '^deploy'; expect[1]",
        ),
        (
            {"exit_code": 1, "output": PYTEST_OUTPUT, "counts": {"failed": 2, "passed": 2}},
            {},
            "exit 1: 2 failed, 2 passed",
        ),
        ({"exit_code": 3, "output": "checking\nno such file: x.csv\n"}, {}, "exit 3: no such file: x.csv"),
        ({"exit_code": 0, "timed_out": True, "output": ""}, {}, "timed out"),
        (
            {},
            {"kind": "classification_match", "observed_label": "xlsx", "expected_label": "pdf"},
            "observed 'xlsx', expected 'pdf'",
        ),
        (
            {"pass_votes": 0, "min_pass_votes": 2, "votes": [{}]},
            {"kind": "llm_judge"},
            "0 passing votes, 2 needed",
        ),
        ({"matched": []}, {"kind": "file_exists"}, "score 0.00 (matched [])"),
    ],
)
def test_the_reason_is_what_the_grader_recorded(
    details: dict[str, Any], fields: dict[str, Any], reason: str
) -> None:
    assert criterion_reason(verdict(details, **fields)).startswith(reason)


def test_a_reason_is_one_line_of_bounded_length() -> None:
    reason = criterion_reason(verdict({"error": "line one\nline two " + "x" * 1000}))
    assert "\n" not in reason and len(reason) <= 240 and reason.endswith("…")


def test_an_episode_names_its_first_failing_gating_criterion() -> None:
    verdicts = [
        verdict({"error": "informational"}, criterion_id="style", gating=False),
        verdict(passed=True, score=1.0, criterion_id="exists"),
        verdict({"exit_code": 1, "output": "1 failed"}, criterion_id="tests", description="the tests pass"),
        verdict({"error": "later"}, criterion_id="other"),
    ]
    end = EpisodeEnd(outcome="fail", status="completed")
    assert episode_reason(end, verdicts) == "tests (the tests pass): exit 1: 1 failed"


def test_an_episode_that_ended_early_says_how_before_its_criterion() -> None:
    end = EpisodeEnd(outcome="fail", status="timeout", error="task_timeout of 30 s")
    reason = episode_reason(end, [verdict({"error": "no file matches 'x'"}, criterion_id="x")])
    assert reason == "timeout: task_timeout of 30 s; x: no file matches 'x'"


def test_an_invalid_episode_gives_its_error() -> None:
    end = EpisodeEnd(outcome="invalid", status="infra_error", error="model API error 401: invalid x-api-key")
    assert episode_reason(end, []) == "infra_error: model API error 401: invalid x-api-key"


def test_evidence_is_the_description_the_facts_then_the_long_texts() -> None:
    output = "\n".join(f"line {i}" for i in range(100))
    rows = dict(
        evidence(verdict({"output": output, "exit_code": 1, "failed": ["a", "b"]}, description="it works"))
    )
    assert list(rows) == ["checks", "exit_code", "failed", "output"]
    assert rows["failed"] == "a\nb"
    shown = rows["output"].splitlines()
    assert shown[0] == f"… ({100 - EVIDENCE_LINES} lines before)" and shown[-1] == "line 99"
    assert len(shown) == EVIDENCE_LINES + 1
