"""tool_order: the first call of one kind comes before the first of another."""

from __future__ import annotations

from pathlib import Path

from tests.criteria.builders import Transcript, context, grade, load_error

RUNBOOK_FIRST = {
    "type": "tool_order",
    "first": {"tool": "Read", "input_pattern": "runbook"},
    "then": {"tool": "Bash", "input_pattern": "deploy"},
}


def test_passes_when_first_comes_first() -> None:
    events = Transcript().bash("ls").read("docs/runbook.md").bash("./deploy.sh").events
    verdict = grade(RUNBOOK_FIRST, context(events))
    assert verdict.score == 1.0
    assert verdict.details["then"] == "#2 Bash: ./deploy.sh"


def test_fails_when_then_comes_first() -> None:
    events = Transcript().bash("./deploy.sh").read("docs/runbook.md").events
    verdict = grade(RUNBOOK_FIRST, context(events))
    assert verdict.score == 0.0
    assert "came before" in verdict.details["error"]


def test_fails_naming_the_side_that_never_happened() -> None:
    verdict = grade(
        {"type": "tool_order", "first": "Grep", "then": "Edit"}, context(Transcript().bash("ls").events)
    )
    assert verdict.details["error"] == "first (Grep) was never called; then (Edit) was never called"
    verdict = grade(RUNBOOK_FIRST, context(Transcript().read("runbook.md").events))
    assert verdict.details["error"] == "then (Bash matching 'deploy') was never called"


def test_one_call_cannot_come_before_itself() -> None:
    verdict = grade(
        {"type": "tool_order", "first": "Bash", "then": "Bash"}, context(Transcript().bash("x").events)
    )
    assert verdict.score == 0.0
    assert "matches both sides" in verdict.details["error"]


def test_bad_input_fails_at_load(tmp_path: Path) -> None:
    message = load_error(tmp_path, "- type: tool_order\n  first: {tool: Read, input_patern: x}\n  then: Bash")
    assert "success_criteria[0].first.input_patern: unknown field (did you mean 'input_pattern'?)" in message
    message = load_error(
        tmp_path, "- type: tool_order\n  first: {tool: Read, input_pattern: '('}\n  then: Bash"
    )
    assert "success_criteria[0].first.input_pattern: invalid regex" in message
