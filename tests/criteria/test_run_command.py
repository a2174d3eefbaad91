"""run_command: exit code, expected_stdout with stdout_match, our stdout_* checks, score_from_stdout."""

from __future__ import annotations

from pathlib import Path

import pytest

from coder_eval.criteria import GradingContext
from coder_eval.sandbox import ExecResult, FakeSandbox
from tests.criteria.builders import grade, load_error, passes, reason


def answering(stdout: str, exit_code: int = 0) -> GradingContext:
    fake = FakeSandbox(on_exec=lambda argv, cwd: ExecResult(exit_code, stdout, "", 0.0))
    return GradingContext(sandbox=fake, events=[], task_dir=Path.cwd())


@pytest.mark.parametrize(
    ("match", "expected", "ok"),
    [
        ("exact", "app 1.2", True),
        ("exact", "app", False),
        ("contains", "1.2", True),
        ("contains", "1.3", False),
        ("regex", r"^app \d+\.\d+$", True),
        ("regex", r"^\d", False),
    ],
)
def test_expected_stdout_per_match_mode(match: str, expected: str, ok: bool) -> None:
    spec = {
        "type": "run_command",
        "command": "app --version",
        "expected_stdout": expected,
        "stdout_match": match,
    }
    assert grade(spec, answering("app 1.2\n")).score == (1.0 if ok else 0.5)  # the exit code check holds


def test_exact_is_the_default_match() -> None:
    spec = {"type": "run_command", "command": "x", "expected_stdout": "app"}
    assert grade(spec, answering("app 1.2")).details["failed"] == ["expected_stdout (exact) 'app'"]


def test_original_default_threshold_passes_a_mostly_right_run() -> None:
    checks = {"stdout_contains": [f"line{i}" for i in range(9)], "expected_exit_code": 0}
    spec = {"type": "run_command", "command": "x", **checks}
    assert passes(spec, answering(" ".join(f"line{i}" for i in range(9))))
    assert passes(spec, answering(" ".join(f"line{i}" for i in range(9)), exit_code=1))  # 9 of 10
    assert not passes(spec, answering("line0", exit_code=1))


def test_bad_stdout_match_or_regex_fails_at_load(tmp_path: Path) -> None:
    assert "stdout_match" in load_error(
        tmp_path, "- type: run_command\n  command: x\n  expected_stdout: y\n  stdout_match: fuzzy"
    )
    assert "invalid regex" in load_error(
        tmp_path, "- type: run_command\n  command: x\n  expected_stdout: '('\n  stdout_match: regex"
    )


def test_a_failed_output_check_says_what_the_command_printed() -> None:
    spec = {"type": "run_command", "command": "app --version", "stdout_equals": "app 1.3"}
    assert reason(spec, answering("app 1.2\n")) == (
        "failed: stdout_equals 'app 1.3' in the stdout of `app --version`: 'app 1.2\\n'"
    )
    assert "seen" not in grade(spec, answering("app 1.3\n")).details
