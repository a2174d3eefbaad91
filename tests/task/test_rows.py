"""Which dataset rows run: split, then ``sample`` (uniform, seed 0) or ``sample_per_stratum``
(one generator seeded ``sample_seed``, strata in first-seen order), from the file or the command line."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from coder_eval.experiment import Selection
from coder_eval.task.rows import stratified_sample, uniform_sample
from tests.experiment.builders import resolved, word_dataset

IDS = [f"r{i}" for i in range(12)]
STRATA = ["b", "a", "b", "c", "a", "b", "a", "b", "c", "a", "b", "a"]


def test_sample_draws_n_rows_as_random_0_would_over_the_rows_in_file_order() -> None:
    assert uniform_sample(IDS, 5) == set(random.Random(0).sample(IDS, 5))
    assert uniform_sample(IDS, 12) == uniform_sample(IDS, 50) == set(IDS)


def test_the_per_stratum_sample_draws_with_one_generator_in_first_seen_order() -> None:
    rng = random.Random(3)  # the original format's draw, written out: b, then a; c is small enough
    expected = {
        *rng.sample(["r0", "r2", "r5", "r7", "r10"], 2),
        *rng.sample(["r1", "r4", "r6", "r9", "r11"], 2),
    }
    assert stratified_sample(IDS, STRATA, 2, seed=3) == expected | {"r3", "r8"}


def test_a_missing_stratum_field_and_a_null_one_are_two_strata(tmp_path: Path) -> None:
    path = word_dataset(tmp_path, "")
    text = path.read_text().replace("kind: k1", "kind: null").replace("kind: k2, ", "")
    path.write_text(text.replace("dataset:\n", "dataset:\n  sample_per_stratum: 1\n  stratify_field: kind\n"))
    rows = [p.task.dataset_row for p in resolved([path]).plans]
    assert sorted(str(r.get("kind", "missing")) for r in rows if r) == ["None", "missing"]


def test_sample_and_sample_per_stratum_from_the_command_line(tmp_path: Path) -> None:
    path = word_dataset(tmp_path)
    every = resolved([path]).task_ids
    two = resolved([path], selection=Selection(sample=2)).task_ids
    per_kind = resolved([path], selection=Selection(sample_per_stratum=1)).task_ids
    assert len(every) == 6 and len(two) == 2 and set(two) <= set(every)
    assert set(two) == {f"words.{r}" for r in uniform_sample([f"r{i}" for i in range(6)], 2)}
    assert len(per_kind) == 1  # no row has an expected_skill: one stratum, ""
    stratified = resolved([path], selection=Selection(sample_per_stratum=1, split="train"))
    assert len(stratified.task_ids) == 1 and stratified.task_ids[0] in {"words.r1", "words.r3", "words.r5"}


def test_sample_replaces_the_tasks_own_per_stratum_sample(tmp_path: Path) -> None:
    path = word_dataset(tmp_path, "")
    path.write_text(
        path.read_text().replace("dataset:\n", "dataset:\n  sample_per_stratum: 1\n  stratify_field: kind\n")
    )
    assert len(resolved([path]).task_ids) == 2
    assert len(resolved([path], selection=Selection(sample=5)).task_ids) == 5
    assert (
        len(resolved([path], selection=Selection(sample_per_stratum=3)).task_ids) == 3 + 2
    )  # k1: 4 rows, k2: 2


def test_row_options_leave_tasks_without_a_dataset_whole(tmp_path: Path) -> None:
    from tests.helpers import minimal_task

    minimal_task(tmp_path / "data", "plain")
    word_dataset(tmp_path)
    ids = resolved([tmp_path / "data"], selection=Selection(sample=1, split="test")).task_ids
    assert ids[0] == "plain" and len(ids) == 2


@pytest.mark.parametrize("value", ["0", "x"])
def test_the_options_take_a_positive_count(tmp_path: Path, value: str) -> None:
    import subprocess
    import sys

    path = word_dataset(tmp_path)
    result = subprocess.run(
        [sys.executable, "-m", "coder_eval", "plan", str(path), "--sample-per-stratum", value],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 2 and "--sample-per-stratum" in result.stderr
