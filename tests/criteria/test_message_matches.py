"""message_matches: a regex over the final answer or every assistant message."""

from __future__ import annotations

from pathlib import Path

from tests.criteria.builders import Transcript, context, grade, load_error, reason

EVENTS = Transcript().say("Running the tests now.").bash("pytest").say("Fixed.\nAll tests PASS.").events


def test_final_scope_matches_the_last_message_with_flags() -> None:
    spec = {
        "type": "message_matches",
        "pattern": "^all tests pass",
        "flags": {"ignorecase": True, "multiline": True},
    }
    verdict = grade(spec, context(EVENTS))
    assert verdict.score == 1.0
    assert verdict.details["match"] == "All tests PASS"


def test_final_scope_prefers_the_reported_final_message() -> None:
    spec = {"type": "message_matches", "pattern": "PASS"}
    assert grade(spec, context(EVENTS, final_message="Gave up.")).score == 0.0


def test_final_scope_fails_on_earlier_text_that_transcript_finds() -> None:
    spec = {"type": "message_matches", "pattern": "Running the tests"}
    assert grade(spec, context(EVENTS)).score == 0.0
    verdict = grade({**spec, "scope": "transcript"}, context(EVENTS))
    assert verdict.score == 1.0
    assert verdict.details["message"] == 0


def test_should_match_false_catches_an_over_claim() -> None:
    spec = {
        "type": "message_matches",
        "pattern": "tests pass",
        "should_match": False,
        "flags": {"ignorecase": True},
    }
    assert grade(spec, context(EVENTS)).score == 0.0
    assert grade(spec, context(Transcript().say("2 tests still fail.").events)).score == 1.0


def test_bad_input_fails_at_load(tmp_path: Path) -> None:
    assert "success_criteria[0].pattern: invalid regex" in load_error(
        tmp_path, "- type: message_matches\n  pattern: '*pass'"
    )
    assert "success_criteria[0].flags.ignore_case: unknown field (did you mean 'ignorecase'?)" in load_error(
        tmp_path, "- type: message_matches\n  pattern: pass\n  flags: {ignore_case: true}"
    )
    assert "success_criteria[0].scope" in load_error(
        tmp_path, "- type: message_matches\n  pattern: x\n  scope: all"
    )


def test_a_failed_match_says_what_the_agent_said() -> None:
    said = context(Transcript().say("The total is 25.\x1b[8m").events)
    assert reason({"type": "message_matches", "pattern": "total is 24"}, said) == (
        "failed: pattern 'total is 24' not found in the final answer: 'The total is 25.\\x1b[8m'"
    )
    over_claim = {"type": "message_matches", "pattern": "total is \\d+", "should_match": False}
    assert (
        reason(over_claim, said)
        == "failed: pattern 'total is \\\\d+' found in the final answer: 'total is 25'"
    )
