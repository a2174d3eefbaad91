"""A run against a baseline run: paired on task and content hash, through the verdict engine."""

from __future__ import annotations

from pathlib import Path

from coder_eval.analysis import load_runs
from coder_eval.analysis.answer.baseline_run import against_baseline
from coder_eval.run_dir import read_manifest
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
