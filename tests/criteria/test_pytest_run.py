"""pytest: the passed share of what pytest itself counted, passing at pass_threshold (0.9)."""

from __future__ import annotations

from pathlib import Path

from coder_eval.criteria import GradingContext
from coder_eval.sandbox import ExecResult, FakeSandbox
from coder_eval.sandbox.pytest_reports import PytestReport
from tests.criteria.builders import criterion, evaluate, load_error


def after_pytest(passed: int, failed: int, sessions: bool = True) -> tuple[GradingContext, FakeSandbox]:
    fake = FakeSandbox(on_exec=lambda argv, cwd: ExecResult(1 if failed else 0, "", "", 0.0))
    tests = {
        f"tests/test_a.py::test_{i}": "passed" if i < passed else "failed" for i in range(passed + failed)
    }
    report = PytestReport(
        exitstatus=1 if failed else 0,
        collected=passed + failed,
        deselected=0,
        counts={"passed": passed, "failed": failed},
        tests=tests,
        ids=tuple(tests),
    )

    async def reports() -> list[PytestReport]:
        return [report] if sessions else []

    return GradingContext(sandbox=fake, events=[], task_dir=Path.cwd(), pytest_reports=reports), fake


def outcome(passed: int, failed: int, sessions: bool = True, **fields: object) -> tuple[float, bool]:
    spec = criterion({"type": "pytest", "path": "tests/", **fields})
    ctx, _ = after_pytest(passed, failed, sessions)
    verdict = evaluate(spec, ctx)
    ok = verdict.passed if verdict.passed is not None else verdict.score >= spec.pass_threshold
    return verdict.score, ok


def test_nine_of_ten_pass_at_the_default_threshold() -> None:
    assert outcome(9, 1) == (0.9, True)
    assert outcome(8, 2) == (0.8, False)
    assert outcome(9, 1, pass_threshold=1.0) == (0.9, False)


def test_no_finished_session_fails_whatever_the_threshold() -> None:
    assert outcome(10, 0, sessions=False, pass_threshold=0.0) == (0.0, False)


def test_runs_the_trusted_pytest_on_the_path() -> None:
    ctx, fake = after_pytest(1, 0)
    evaluate(criterion({"type": "pytest", "path": "my tests/"}), ctx)
    assert fake.commands[-1][-1] == "python -m pytest -q 'my tests/'"


def test_path_may_not_leave_the_workspace(tmp_path: Path) -> None:
    assert "escapes the sandbox" in load_error(tmp_path, "- type: pytest\n  path: ../elsewhere")
