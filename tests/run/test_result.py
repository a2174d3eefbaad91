"""The exit code a finished run decides: nothing measured (5) over a budget stop (3) over a failed gate
(1) over a failed report (4); ``require_all_pass`` makes any episode that did not pass a failed gate."""

from __future__ import annotations

from pathlib import Path

import pytest

from coder_eval.run import BatchSummary, Finished, ReportOutcome, RunResult
from coder_eval.run.gates import GateResult
from coder_eval.run.summary import NotPassed, RunSummary, VariantTotals


def totals(passed: int, failed: int, invalid: int) -> RunSummary:
    variant = VariantTotals("v", {"pass": passed, "fail": failed, "invalid": invalid})
    not_passed = [NotPassed(f"e{i}", "v", "fail", "why") for i in range(failed)]
    not_passed += [NotPassed(f"i{i}", "v", "invalid", "why") for i in range(invalid)]
    return RunSummary([variant], not_passed, 0)


def finished(gate: str | None = None, report_ok: bool = True) -> Finished:
    gates = None if gate is None else [GateResult("min_pass_rate", "v", "pass_rate", 0.5, verdict=gate)]
    report = ReportOutcome("run_report", Path("r.html"), report_ok, None if report_ok else "boom")
    return Finished(gates=gates, reports=[report])


@pytest.mark.parametrize(
    ("outcomes", "gate", "report_ok", "budget", "all_pass", "code"),
    [
        ((2, 0, 0), "pass", True, False, False, 0),
        ((2, 0, 0), None, False, False, False, 4),
        ((1, 1, 0), "fail", False, False, False, 1),  # a failed gate over a failed report
        ((1, 1, 0), "fail", True, True, False, 3),  # a budget stop over a failed gate
        ((0, 0, 2), "fail", False, True, False, 5),  # nothing measured over everything
        ((1, 1, 0), None, False, False, True, 1),  # require_all_pass: a failed gate, over a report
        ((1, 1, 0), None, True, True, True, 3),  # ... under a budget stop
        ((2, 0, 0), None, True, False, True, 0),  # every episode passed
        ((0, 0, 0), None, True, True, False, 3),  # a budget that let none start: measured, stopped
    ],
)
def test_the_exit_code_follows_the_precedence(
    outcomes: tuple[int, int, int], gate: str | None, report_ok: bool, budget: bool, all_pass: bool, code: int
) -> None:
    batch = BatchSummary(budget_stopped=budget, not_started=2 if budget else 0)
    result = RunResult(Path("runs/r"), totals(*outcomes), finished(gate, report_ok), batch, 1.0, all_pass)
    assert result.exit_code == code
