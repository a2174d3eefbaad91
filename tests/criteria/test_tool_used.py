"""tool_used: counting calls of one tool, optionally with a matching input."""

from __future__ import annotations

from pathlib import Path

from tests.criteria.builders import Transcript, context, grade, load_error

EVENTS = Transcript().read("/s/docs/deploy.md").read("/s/app.py").bash("ls").events


def test_passes_when_the_tool_was_used_with_matching_input() -> None:
    verdict = grade({"type": "tool_used", "tool": "Read", "input_pattern": r"docs/.*\.md"}, context(EVENTS))
    assert verdict.score == 1.0
    assert verdict.details["calls"] == ['#0 Read: {"file_path": "/s/docs/deploy.md"}']


def test_fails_over_max_and_lists_tools_when_unused() -> None:
    assert grade({"type": "tool_used", "tool": "Read", "max": 1}, context(EVENTS)).score == 0.0
    verdict = grade({"type": "tool_used", "tool": "WebFetch"}, context(EVENTS))
    assert verdict.score == 0.0
    assert verdict.details["tools_used"] == ["Bash", "Read"]


def test_min_zero_max_zero_forbids_a_tool() -> None:
    assert grade({"type": "tool_used", "tool": "WebFetch", "min": 0, "max": 0}, context(EVENTS)).score == 1.0
    assert grade({"type": "tool_used", "tool": "Bash", "min": 0, "max": 0}, context(EVENTS)).score == 0.0


def test_bad_input_fails_at_load(tmp_path: Path) -> None:
    assert "success_criteria[0].input_pattern: invalid regex" in load_error(
        tmp_path, "- type: tool_used\n  tool: Read\n  input_pattern: '[docs'"
    )
    assert "success_criteria[0].tools: unknown field (did you mean 'tool'?)" in load_error(
        tmp_path, "- type: tool_used\n  tools: Read"
    )
