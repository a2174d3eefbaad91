"""What a finished run returns: its totals, what the finish did, and the exit code they decide.

Exit code precedence: nothing measured (5) over a budget stop (3) over a failed gate (1) over a
gate that could not be evaluated (7: the run store was busy) over a failed report (4); with
``require_all_pass``, any episode that did not pass is a failed gate (1: over a gate not evaluated
and a failed report, under a budget stop). An interruption (130) and an unwritable run directory
(6) are raised, never returned.

Example::

    result = session.finish(AfterRun(min_pass_rate=0.8))
    result.exit_code, result.totals.outcomes, [g.verdict for g in result.finished.gates or []]
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from coder_eval.errors import ExitCode
from coder_eval.run.batch import BatchSummary
from coder_eval.run.finish import Finished
from coder_eval.run.summary import RunSummary


@dataclass(frozen=True)
class Totals:
    """The run's outcomes read back from its directory (``kept``: episodes a resume kept, None when
    the run was not resumed) and, in a run with skills, one line per arm on what they offered."""

    summary: RunSummary
    kept: int | None = None
    skills: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class RunResult:
    """A finished run, as data: the command line prints it, a notebook reads it."""

    path: Path
    totals: RunSummary
    finished: Finished
    batch: BatchSummary
    max_cost_usd: float | None = None
    require_all_pass: bool = False

    @property
    def budget_stopped(self) -> bool:
        return self.batch.budget_stopped

    @property
    def measured(self) -> bool:
        """At least one finished episode was valid."""
        return self.totals.measured

    @property
    def all_passed_failed(self) -> bool:
        """``require_all_pass`` was asked, and some episode did not pass."""
        return self.require_all_pass and bool(self.totals.not_passed)

    @property
    def exit_code(self) -> int:
        """The run's exit code (the precedence in the module docstring)."""
        code = ExitCode.GATE_FAILED if self.finished.failed_gates else 0
        if self.finished.not_gated is not None:
            code = code or ExitCode.NOT_GATED
        if self.finished.failed_reports:
            code = code or ExitCode.REPORT_FAILED
        if self.budget_stopped:
            code = ExitCode.BUDGET_STOPPED
        if not self.measured:
            return ExitCode.NOTHING_MEASURED
        if self.all_passed_failed:
            return ExitCode.GATE_FAILED if code in (0, ExitCode.REPORT_FAILED, ExitCode.NOT_GATED) else code
        return code
