"""The end of a run with ``--baseline``: the run against its baseline run (``analysis.baseline``),
as gate rows (``gate: baseline``, one per paired variant) that fail only on a called regression.

A row's value is the primary metric's change against the baseline, with the verdict's interval;
with ``--fail-on worse`` it fails when that change is called worse (its interval excludes 0 and
p < 0.05: never on noise); without it the row reads ``not gated``. When ``latest-on-BRANCH`` finds no
run yet (the first run on a branch), there are no rows and the note says why; when no task pairs
(none in common, or every one changed), one row passes and says "nothing paired" and why.

Example::

    rows, found, note = baseline_gates(run, Path("runs/history.duckdb"), "latest-on-main", "worse")
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Literal, cast

from coder_eval.errors import InputError
from coder_eval.run.gates import GateResult
from coder_eval.run_dir import RunDir

if TYPE_CHECKING:
    from coder_eval.analysis.answer.baseline_run import Regression
    from coder_eval.experiment import Resolution

FailOn = Literal["worse", "never"]
FAIL_ON = ("worse", "never")
NAN = float("nan")


def regression_gate(reference: str | None, fail_on: str, store: Path) -> tuple[str | None, FailOn]:
    """``--baseline`` and ``--fail-on`` checked before anything runs: an unknown ``fail_on``,
    ``worse`` without a baseline, or a folder or run id that names nothing is ``InputError`` (exit 2).

    Example: ``regression_gate("latest-on-main", "worse", Path("runs/history.duckdb"))``
    -> ``("latest-on-main", "worse")``; ``regression_gate(None, "never", store)`` -> ``(None, "never")``.
    """
    from coder_eval.store.baseline_ref import check_reference

    if fail_on not in FAIL_ON:
        raise InputError(f"--fail-on {fail_on!r}: choose worse or never")
    if reference is None:
        if fail_on != "never":
            raise InputError(f"--fail-on {fail_on}: it needs --baseline (the run to compare with)")
        return None, "never"
    check_reference(reference, store)
    return reference, cast(FailOn, fail_on)


def check_experiment_gate(resolution: Resolution, reference: str | None, store: Path) -> None:
    """Before any episode: the baseline the experiment file names (when ``--baseline`` does not
    replace it) is checked as ``--baseline`` is (``InputError``, exit 2, when it names nothing)."""
    from coder_eval.store.baseline_ref import check_reference

    gate = resolution.experiment.baseline
    if reference is None and gate is not None:
        where = resolution.experiment.path or "the experiment"
        check_reference(gate.run, store, named=f"{where}: baseline: run:")


def baseline_gates(
    run: RunDir, store: Path, reference: str, fail_on: FailOn
) -> tuple[list[GateResult], Regression | None, str | None]:
    """The gate rows, the comparison they come from, and a note when there is no baseline."""
    from coder_eval.store.baseline_ref import compare_with_baseline

    regression, found, note = compare_with_baseline(run.path, reference, store)
    if regression is None or found is None:
        return [], None, note
    if regression.nothing_paired:
        why = regression.nothing_paired
        shown: Literal["pass", "not gated"] = "pass" if fail_on == "worse" else "not gated"
        return (
            [
                GateResult(
                    "baseline", "(all)", "passed", NAN, label=f"vs {found.run_id}", verdict=shown, note=why
                )
            ],
            regression,
            None,
        )
    rows = []
    for arm in regression.arms:
        c = arm.verdicts.primary
        verdict: Literal["pass", "fail", "not gated"] = "fail" if arm.called_worse else "pass"
        rows.append(
            GateResult(
                "baseline", arm.variant_id, c.metric if c else "passed", NAN,
                value=c.diff if c else NAN, ci_low=c.verdict_ci_low if c else NAN,
                ci_high=c.verdict_ci_high if c else NAN, label=f"vs {found.run_id}",
                verdict=verdict if fail_on == "worse" else "not gated",
                note=f"{arm.verdicts.line()}; {regression.pairing.description}",
            )
        )  # fmt: skip
    return rows, regression, None
