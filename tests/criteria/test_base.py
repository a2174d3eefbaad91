"""Fields every criterion has: pass_threshold defaults by kind, suite_thresholds, stop_early, flags."""

from __future__ import annotations

from pathlib import Path

import pytest

from coder_eval.criteria.flags import parse_flags
from tests.criteria.builders import criterion, load_error


@pytest.mark.parametrize(
    ("kind", "fields", "threshold"),
    [
        ("file_contains", {"path": "a"}, 0.9),
        ("command_executed", {"command_pattern": "x"}, 0.9),
        ("commands_efficiency", {"expected": 3}, 0.9),
        ("llm_judge", {"prompt": "ok?", "model": "scripted", "scripted": {"turns": []}}, 0.7),
        ("agent_judge", {"rubric": "ok?"}, 0.7),
        ("recorded_calls", {"shim": "s"}, 1.0),
        ("hidden_tests", {"command": "pytest"}, 1.0),
        ("tool_used", {"tool": "Read"}, 1.0),
    ],
)
def test_original_kinds_default_to_its_threshold_ours_keep_one(
    kind: str, fields: dict[str, object], threshold: float
) -> None:
    assert criterion({"type": kind, **fields}).pass_threshold == threshold


def test_an_explicit_threshold_wins() -> None:
    assert criterion({"type": "file_contains", "path": "a", "pass_threshold": 1.0}).pass_threshold == 1.0


def test_suite_thresholds_on_a_criterion_take_every_metric() -> None:
    metrics = {
        "accuracy": 0.8,
        "macro_f1": 0.7,
        "weighted_f1": 0.7,
        "micro_f1": 0.7,
        "precision.pdf": 0.9,
        "recall.pdf": 0.9,
        "mean": 0.5,
        "completion_rate": 1.0,
    }
    spec = criterion({"type": "skill_triggered", "skill_name": "pdf", "suite_thresholds": metrics})
    assert spec.suite_thresholds == metrics


def test_unknown_suite_metric_and_out_of_range_value_fail_at_load(tmp_path: Path) -> None:
    error = load_error(tmp_path, "- type: file_exists\n  path: a\n  suite_thresholds: {acuracy: 0.8}")
    assert "task.yaml:6" in error and "unknown suite metric 'acuracy' (did you mean 'accuracy'?)" in error
    assert "less than or equal to 1" in load_error(
        tmp_path, "- type: file_exists\n  path: a\n  suite_thresholds: {recall.pdf: 2}"
    )
    assert "unknown suite metric 'recall.'" in load_error(
        tmp_path, "- type: file_exists\n  path: a\n  suite_thresholds: {recall.: 0.5}"
    )


def test_stop_early_is_stored_on_the_two_kinds_that_arm_it() -> None:
    spec = criterion({"type": "command_executed", "pattern": "x", "stop_early": {"decide_within": 5}})
    assert spec.stop_early is not None  # type: ignore[attr-defined]
    assert (spec.stop_early.on_pass, spec.stop_early.on_fail, spec.stop_early.decide_within) == (  # type: ignore[attr-defined]
        "continue",
        "stop",
        5,
    )  # the original format's defaults: a settled fail stops, a pass runs on
    armed = criterion({"type": "skill_triggered", "skill": "pdf", "stop_early": True})
    assert armed.stop_early.on_pass == "continue"  # type: ignore[attr-defined]
    assert criterion({"type": "skill_triggered", "skill": "pdf", "stop_early": False}).stop_early is None  # type: ignore[attr-defined]


def test_stop_early_elsewhere_or_malformed_is_refused_by_name(tmp_path: Path) -> None:
    error = load_error(tmp_path, "- type: file_exists\n  path: a\n  stop_early: {on_pass: stop}")
    assert (
        "task.yaml:4" in error
        and "stop_early: early stop is armed only on command_executed, command_not_executed and "
        "skill_triggered"
        in error
    )
    assert "on_pass" in load_error(
        tmp_path, "- type: command_executed\n  pattern: x\n  stop_early: {on_pass: halt}"
    )
    assert "decide_within" in load_error(
        tmp_path, "- type: command_executed\n  pattern: x\n  stop_early: {decide_within: 0}"
    )


@pytest.mark.parametrize(
    ("written", "names"),
    [
        ("IGNORECASE", ["IGNORECASE"]),
        ("re.I|re.M", ["IGNORECASE", "MULTILINE"]),
        ("is", ["IGNORECASE", "DOTALL"]),
        (["multiline", "s"], ["MULTILINE", "DOTALL"]),
        ({"ignorecase": True, "dotall": False}, ["IGNORECASE"]),
        (None, []),
    ],
)
def test_flags_in_every_spelling(written: object, names: list[str]) -> None:
    assert parse_flags(written) == names


def test_unknown_flag_is_an_error(tmp_path: Path) -> None:
    error = load_error(tmp_path, "- type: file_matches_regex\n  path: a\n  pattern: x\n  flags: [UNICORN]")
    assert "unknown regex flag 'UNICORN'" in error
