"""A run against a baseline run: paired on task and content hash, through the verdict engine."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from coder_eval.analysis import compare, load_runs
from coder_eval.analysis.answer.baseline_run import against_baseline, gate_family, gate_plan
from coder_eval.analysis.answer.engine import Declaration
from coder_eval.analysis.stats.multiplicity import holm
from coder_eval.run_dir import read_manifest
from tests.analysis.builders import episodes_frame
from tests.store.histories import grid, write_run

TASKS = [f"t{i}" for i in range(8)]


def regression(
    tmp_path: Path, now: dict[str, str], hashes: dict[str, str] | None = None, variants=("default",)
):
    before = write_run(tmp_path / "runs", "main", grid(dict.fromkeys(TASKS, "pass"), variants))
    after = write_run(tmp_path / "runs", "pr", grid(now, variants), hashes=hashes, day=1)
    return against_baseline(
        load_runs(after),
        load_runs(before),
        read_manifest(after).task_hashes,
        read_manifest(before).task_hashes,
    )


def test_a_run_that_fails_what_the_baseline_passed_is_called_worse(tmp_path: Path) -> None:
    found = regression(tmp_path, dict.fromkeys(TASKS, "fail"))
    primary = found.arms[0].verdicts.primary
    assert primary is not None and primary.verdict == "b_better" and primary.n_tasks == 8
    assert found.regressed
    assert found.arms[0].worse["task_id"].tolist() == TASKS
    assert found.lines()[0].startswith(
        "default vs baseline main: candidate vs baseline, 8 tasks: pass rate -100"
    )


def test_a_few_changed_outcomes_are_noise_not_a_regression(tmp_path: Path) -> None:
    found = regression(tmp_path, {**dict.fromkeys(TASKS, "pass"), "t0": "fail", "t1": "fail"})
    assert found.arms[0].verdicts.primary.verdict == "inconclusive"  # type: ignore[union-attr]
    assert not found.regressed
    assert found.arms[0].worse["task_id"].tolist() == ["t0", "t1"]


def test_a_task_whose_content_changed_is_not_paired_and_said_so(tmp_path: Path) -> None:
    found = regression(tmp_path, dict.fromkeys(TASKS, "fail"), hashes={"t3": "sha256:edited"})
    assert found.pairing.changed == ("t3",)
    assert "t3" not in found.pairing.paired
    assert found.arms[0].verdicts.primary.n_tasks == 7  # type: ignore[union-attr]
    assert "not paired: 1 changed since the baseline (t3)" in found.pairing.description


def test_variants_pair_by_id_and_an_unmatched_one_is_named(tmp_path: Path) -> None:
    before = write_run(tmp_path / "runs", "main", grid(dict.fromkeys(TASKS, "pass"), ("a", "b")))
    after = write_run(tmp_path / "runs", "pr", grid(dict.fromkeys(TASKS, "pass"), ("a", "c")), day=1)
    found = against_baseline(load_runs(after), load_runs(before), {}, {})
    assert [(arm.variant_id, arm.baseline_variant) for arm in found.arms] == [("a", "a")]
    assert found.unmatched == ("c",)
    assert "8 paired without a recorded content hash" in found.pairing.description


def test_several_variants_are_gated_holm_across_them(tmp_path: Path) -> None:
    """Four variants: one lost 6 of 40 tasks (p = 0.031 alone), the others none; across four
    variants Holm does not call it (0.031 x 4), and the gate reads the adjusted call."""
    tasks = [f"t{i}" for i in range(40)]
    variants = ("a", "b", "c", "d")
    before = write_run(tmp_path / "runs", "main", grid(dict.fromkeys(tasks, "pass"), variants))
    now = grid(dict.fromkeys(tasks, "pass"), variants) | {(f"t{i}", "a", 0): "fail" for i in range(6)}
    after = write_run(tmp_path / "runs", "pr", now, day=1)
    found = against_baseline(load_runs(after), load_runs(before), {}, {}, Declaration(metrics=("passed",)))

    alone = [arm.verdicts.primary for arm in found.arms]
    gated = [arm.gated for arm in found.arms]
    assert alone[0] is not None and alone[0].verdict == "b_better" and alone[0].p_value < 0.05
    assert gated[0] is not None and gated[0].verdict == "inconclusive" and not found.regressed
    assert [g.p_adjusted for g in gated if g] == pytest.approx(holm([c.p_value for c in alone if c]))
    assert gated[0].verdict_ci_high >= 0 and gated[0].verdict_confidence > 0.95  # at the Holm step


@pytest.mark.slow
def test_an_a_a_gate_over_four_variants_holds_its_level() -> None:
    """Four variants, each run twice with nothing changed (24 tasks, one repeat, task pass
    probabilities from logit ~ N(1, 1.5)): the gate must fail at most 5 % of such runs across the
    variants. 200 simulated pairs of runs (about a minute); the Monte Carlo standard error of a rate of
    5 % is 1.5 points, and the corrected rate is expected near 1.5 %, so the bound is checked with a
    margin of over two standard errors. Uncorrected, the same runs fail about 6 % of the time (the
    issue's measurement); the count is shown to exceed the corrected one."""
    rng = np.random.default_rng(34)
    failed = failed_alone = 0
    sims = 200
    for _ in range(sims):
        p = 1 / (1 + np.exp(-rng.normal(1.0, 1.5, 24)))
        frames = [aa_frame(rng, p) for _ in range(4)]
        primaries = [compare(f, "candidate", "baseline", planned=False) for f in frames]
        failed_alone += any(c.verdict == "b_better" for c in primaries)
        failed += any(c.verdict == "b_better" for c in gate_family(primaries, frames))
    assert failed / sims <= 0.05
    assert failed_alone > failed


def aa_frame(rng: np.random.Generator, p: np.ndarray) -> pd.DataFrame:
    """One variant against its baseline with nothing changed: each task passes with ``p``."""
    outcome = {
        arm: {f"t{i}": ["pass" if rng.random() < p[i] else "fail"] for i in range(len(p))}
        for arm in ("baseline", "candidate")
    }
    return episodes_frame(outcome)


def test_the_gate_plan_says_the_smallest_drop_a_suite_sees() -> None:
    """24 tasks, one repeat, 87.5 % passed: a drop of 25 points is below what the gate sees."""
    passing = {f"t{i}": ["pass" if i < 21 else "fail"] for i in range(24)}
    baseline = episodes_frame({"main": passing})
    small, large = gate_plan(baseline, list(passing), 1), gate_plan(baseline, list(passing), 3)
    assert small.n_tasks == 24 and small.mde > 0.25
    assert large.mde < small.mde
    assert np.isnan(gate_plan(baseline, ["t0"], 1).mde)
