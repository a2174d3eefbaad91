"""classification_match: a label read from a sandbox file against the expected label."""

from __future__ import annotations

from pathlib import Path

from tests.criteria.builders import context, grade, load_error
from tests.test_failures import verdict as criterion_verdict


def sandbox_with(tmp_path: Path, name: str, text: str) -> Path:
    (tmp_path / name).write_text(text, encoding="utf-8")
    return tmp_path


def test_plain_text_label_matches(tmp_path: Path) -> None:
    root = sandbox_with(tmp_path, "label.txt", "billing\n")
    verdict = grade(
        {"type": "classification_match", "path": "label.txt", "expected": "billing"}, context(root=root)
    )
    assert verdict.score == 1.0
    assert (verdict.observed_label, verdict.expected_label) == ("billing", "billing")


def test_jmespath_label_mismatch_is_recorded(tmp_path: Path) -> None:
    root = sandbox_with(tmp_path, "answer.json", '{"result": {"category": "Bug"}}')
    spec = {
        "type": "classification_match",
        "path": "answer.json",
        "jmespath": "result.category",
        "expected": "bug",
    }
    verdict = grade(spec, context(root=root))
    assert (verdict.score, verdict.observed_label, verdict.expected_label) == (0.0, "Bug", "bug")
    verdict = grade({**spec, "case_sensitive": False}, context(root=root))
    assert (verdict.score, verdict.observed_label) == (1.0, "bug")


def test_pattern_extracts_a_group_and_flags_out_of_list_labels(tmp_path: Path) -> None:
    root = sandbox_with(tmp_path, "out.md", "Reasoning...\nLABEL: feature-request\n")
    spec = {
        "type": "classification_match",
        "path": "out.md",
        "pattern": r"LABEL:\s*(\S+)",
        "expected": "bug",
        "labels": ["bug", "billing"],
    }
    verdict = grade(spec, context(root=root))
    assert (verdict.score, verdict.observed_label) == (0.0, "feature-request")
    assert verdict.details["out_of_labels"] is True


def test_missing_file_is_none_and_matches_an_empty_expectation(tmp_path: Path) -> None:
    spec = {"type": "classification_match", "path": "label.txt", "expected": ""}
    verdict = grade(spec, context(root=tmp_path))
    assert (verdict.score, verdict.observed_label, verdict.expected_label) == (1.0, "none", "none")
    assert verdict.details["problem"] == "label.txt does not exist"
    assert grade({**spec, "expected": "bug"}, context(root=tmp_path)).score == 0.0


def test_bad_input_fails_at_load(tmp_path: Path) -> None:
    base = "- type: classification_match\n  path: a.json\n  expected: bug\n"
    assert "success_criteria[0].pattern: invalid regex" in load_error(tmp_path, base + "  pattern: '(x'")
    assert "success_criteria[0].jmespath: invalid JMESPath" in load_error(
        tmp_path, base + "  jmespath: 'a[?'"
    )
    assert "expected label 'bug' is not in labels ['billing']" in load_error(
        tmp_path, base + "  labels: [billing]"
    )
    assert "success_criteria[0].label: unknown field (did you mean 'labels'?)" in load_error(
        tmp_path, base + "  label: [bug]"
    )


def test_original_spelling_loads_to_the_same_fields(tmp_path: Path) -> None:
    from tests.criteria.builders import criterion

    ours = criterion({"type": "classification_match", "path": "a", "expected": "bug", "labels": ["bug", "x"]})
    theirs = criterion(
        {"type": "classification_match", "path": "a", "expected_label": "bug", "allowed_labels": ["bug", "x"]}
    )
    assert ours == theirs
    assert "expected label 'y' is not in labels" in load_error(
        tmp_path, "- type: classification_match\n  path: a\n  expected_label: y\n  allowed_labels: [x]"
    )


def test_a_mismatch_says_what_the_label_was_read_from(tmp_path: Path) -> None:
    from coder_eval.failures import criterion_reason

    root = sandbox_with(tmp_path, "answer.json", '{"result": {"category": "Bug"}}')
    spec = {
        "type": "classification_match",
        "path": "answer.json",
        "jmespath": "result.category",
        "expected": "bug",
    }
    found = grade(spec, context(root=root))
    recorded = criterion_verdict(
        found.details, kind="classification_match", observed_label=found.observed_label, expected_label="bug"
    )
    assert criterion_reason(recorded) == (
        "observed 'Bug', expected 'bug', read in answer.json: '{\"result\": {\"category\": \"Bug\"}}'"
    )
    assert "seen" not in grade({**spec, "case_sensitive": False}, context(root=root)).details
