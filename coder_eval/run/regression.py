"""The end of a run with ``--baseline`` (and of a run ``--until-conclusive``): gate rows that fail
only on a called regression, and the plain guards beside the test.

- ``baseline_gates`` (``gate: baseline``, one row per paired variant): the primary metric's change
  against the baseline run with the verdict's interval. With ``--fail-on worse`` a row fails when that
  change is called worse, Holm-adjusted across the variants (``analysis.answer.baseline_run``); with
  ``--max-drop`` also when its point estimate drops by more than that, called or not. The note says
  what an inconclusive row could have seen (its MDE). Without ``--fail-on worse`` rows read
  ``not gated``; when ``latest-on-BRANCH`` finds no run yet there are no rows and the note says why;
  when no task pairs (none in common, or every one changed), one row passes and says "nothing
  paired" and why.
- ``skill_gates`` (``gate: skill-loaded``): with ``--fail-on worse``, a skill an arm was offered that
  its CLI loaded in none of its episodes fails the run (a renamed or broken skill measures the agent
  without it).
- ``sequence_gate`` (``gate: until-conclusive``): a run that stopped at its answer, as its decision
  says: worse fails, better and no effect pass; a ``blocked`` stop fails (the harness could not
  measure a task, so a regression is not ruled out) and an inconclusive one passes, each saying so.
- ``gate_plan_line``: before the run, the smallest drop ``--fail-on worse`` sees at this size.

Example::

    rows, found, note = baseline_gates(run, Path("runs/history.duckdb"), "latest-on-main", Guard("worse"))
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal, cast

from coder_eval.errors import InputError
from coder_eval.run.gates import GateResult
from coder_eval.run_dir import RunDir

if TYPE_CHECKING:
    from coder_eval.analysis.answer.baseline_run import ArmRegression, Regression
    from coder_eval.experiment import Resolution
    from coder_eval.manifest import AdaptiveRecord

FailOn = Literal["worse", "never"]
FAIL_ON = ("worse", "never")
NAN = float("nan")
Verdict = Literal["pass", "fail", "not gated"]


@dataclass(frozen=True)
class Guard:
    """What fails the regression gate: ``fail_on`` (a called regression) and ``max_drop`` (a drop of
    the primary metric's point estimate larger than this, in the metric's units: 0.1 = ten points of
    pass rate)."""

    fail_on: FailOn = "never"
    max_drop: float | None = None


def regression_gate(
    reference: str | None, fail_on: str, store: Path, until_conclusive: bool | None = False
) -> tuple[str | None, FailOn]:
    """``--baseline`` and ``--fail-on`` checked before anything runs: an unknown ``fail_on``,
    ``worse`` with neither a baseline nor ``--until-conclusive`` (``until_conclusive`` None: the
    experiment may declare it, checked once it is read), or a folder or run id that names nothing is
    ``InputError`` (exit 2).

    Example: ``regression_gate("latest-on-main", "worse", Path("runs/history.duckdb"))``
    -> ``("latest-on-main", "worse")``; ``regression_gate(None, "never", store)`` -> ``(None, "never")``.
    """
    if fail_on not in FAIL_ON:
        raise InputError(f"--fail-on {fail_on!r}: choose worse or never")
    if reference is None:
        if fail_on != "never" and until_conclusive is False:
            raise InputError(
                f"--fail-on {fail_on}: it needs --baseline (the run to compare with) or --until-conclusive"
            )
        return None, cast(FailOn, fail_on)
    from coder_eval.store.baseline_ref import check_reference

    check_reference(reference, store)
    return reference, cast(FailOn, fail_on)


def check_experiment_gate(resolution: Resolution, reference: str | None, store: Path) -> None:
    """Before any episode: the baseline the experiment file names (when ``--baseline`` does not
    replace it) is checked as ``--baseline`` is (``InputError``, exit 2, when it names nothing)."""
    gate = resolution.experiment.baseline
    if reference is None and gate is not None:
        from coder_eval.store.baseline_ref import check_reference  # the statistics, for a gate only

        where = resolution.experiment.path or "the experiment"
        check_reference(gate.run, store, named=f"{where}: baseline: run:")


def check_max_drop(max_drop: float | None, reference: str | None) -> float | None:
    """``--max-drop`` checked before anything runs: in (0, 1], and only with ``--baseline``."""
    if max_drop is None:
        return None
    if reference is None:
        raise InputError("--max-drop: it needs --baseline (the run the drop is measured from)")
    if not 0 < max_drop <= 1:
        raise InputError(f"--max-drop {max_drop:g}: give the drop in pass rate as a share, 0 < drop <= 1")
    return max_drop


def baseline_gates(
    run: RunDir, store: Path, reference: str, guard: Guard | FailOn
) -> tuple[list[GateResult], Regression | None, str | None]:
    """The gate rows, the comparison they come from, and a note when there is no baseline (or it is a
    budget-stopped one, which pairs only the tasks it reached)."""
    from coder_eval.store.baseline_ref import compare_with_baseline

    guard = guard if isinstance(guard, Guard) else Guard(guard)
    regression, found, note = compare_with_baseline(run.path, reference, store)
    if regression is None or found is None:
        return [], None, note
    if regression.nothing_paired:
        shown: Verdict = "pass" if guard.fail_on == "worse" else "not gated"
        row = GateResult("baseline", "(all)", "passed", NAN, label=f"vs {found.run_id}", verdict=shown,
                         note=regression.nothing_paired)  # fmt: skip
        return [row], regression, note
    rows = [arm_row(arm, regression, found.run_id, guard) for arm in regression.arms]
    return rows, regression, note


def arm_row(arm: ArmRegression, regression: Regression, baseline_id: str, guard: Guard) -> GateResult:
    """One variant's row: failed by a called regression or a drop past ``max_drop``, and why."""
    from coder_eval.analysis.answer.wording import mde_text, metric_value

    c = arm.gated or arm.verdicts.primary
    dropped = guard.max_drop is not None and c is not None and c.diff < -guard.max_drop
    verdict: Verdict = "fail" if arm.called_worse or dropped else "pass"
    notes = [arm.verdicts.line()]
    if c is not None and len(regression.arms) > 1:
        notes.append(f"Holm across {len(regression.arms)} variants: p = {c.p_adjusted:.3g}")
    if c is not None and c.verdict == "inconclusive":
        notes.append(f"inconclusive; the smallest drop this suite calls with 80 % power: {mde_text(c)}")
    if dropped and c is not None:
        notes.append(
            f"the drop {metric_value(c.metric, c.diff, signed=True)} is past --max-drop {guard.max_drop:g}"
        )
    notes.append(regression.pairing.description)
    return GateResult(
        "baseline", arm.variant_id, c.metric if c else "passed", NAN,
        value=c.diff if c else NAN, ci_low=c.verdict_ci_low if c else NAN,
        ci_high=c.verdict_ci_high if c else NAN, label=f"vs {baseline_id}",
        verdict=verdict if guard.fail_on == "worse" else "not gated", note="; ".join(notes),
    )  # fmt: skip


def skill_gates(run: RunDir, fail_on: FailOn) -> list[GateResult]:
    """A row per skill an arm was offered and never loaded (where its CLI reports loading)."""
    from coder_eval.episode.skill_record import never_loaded

    manifest, ends = run.read_manifest(), run.finished_episodes()
    by_arm = {
        v: [ends[e.episode_id] for e in manifest.episodes if e.variant_id == v and e.episode_id in ends]
        for v in manifest.variants
    }
    verdict: Verdict = "fail" if fail_on == "worse" else "not gated"
    rows = []
    for found in never_loaded(by_arm):
        note = (
            f"offered in {found.offered_in} episodes, loaded in 0 of the {found.reported_in} that report "
            f"loading ({found.evidence or 'the CLI'}): the arm ran without it (renamed or broken?)"
        )
        row = GateResult("skill-loaded", found.arm, "loaded", 1.0, 0.0, label=found.skill, note=note)
        rows.append(replace(row, verdict=verdict))
    return rows


def sequence_gate(record: AdaptiveRecord, fail_on: FailOn) -> GateResult:
    """A run that stopped at its answer, as its decision says (blocked and inconclusive said so)."""
    path = record.paths[0] if record.paths else None
    last = path.looks[-1] if path is not None and path.looks else None
    verdict: Verdict = "pass"
    if record.decision == "worse" or record.stop == "blocked":
        verdict = "fail"
    label = "blocked" if record.stop == "blocked" else str(record.decision)
    return GateResult(
        "until-conclusive", record.candidate, path.metric if path else "passed", NAN,
        value=NAN if last is None else (last.low + last.high) / 2,
        ci_low=NAN if last is None else last.low, ci_high=NAN if last is None else last.high,
        label=f"vs {record.baseline}", verdict=verdict if fail_on == "worse" else "not gated",
        note=f"{label}: {record.reason}",
    )  # fmt: skip


def gate_plan_line(
    reference: str, store: Path, task_ids: Sequence[str], repeats: int, max_drop: float | None
) -> str | None:
    """Before the run: the smallest drop in pass rate ``--fail-on worse`` calls with 80 % power at this
    suite size, from the baseline's tasks (None when there is no baseline yet, or too few tasks)."""
    from coder_eval.analysis.answer.baseline_run import gate_plan
    from coder_eval.store.baseline_ref import find_baseline

    found = find_baseline(reference, store)
    if found is None:
        return None
    plan = gate_plan(found.runs.episodes, task_ids, repeats)
    size = f"{plan.n_tasks} tasks × {repeats} repeat{'s' if repeats != 1 else ''}"
    if math.isnan(plan.mde):
        return (
            f"--fail-on worse: at {size} no drop in pass rate is called with 80 % power; add tasks or repeats"
        )
    line = (
        f"--fail-on worse: at {size} a drop in pass rate is called with 80 % power from "
        f"{100 * plan.mde:.0f} points (approximate, from {found.run_id}); smaller drops pass unseen"
    )
    if max_drop is not None and max_drop < plan.mde:
        line += f"; --max-drop {max_drop:g} guards them on the point estimate only"
    elif max_drop is None:
        line += " unless --max-drop catches them"
    return line
