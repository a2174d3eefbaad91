"""The baseline gate rows a run's end adds: failing only on a called regression, and only when asked."""

from __future__ import annotations

from pathlib import Path

import pytest

from coder_eval.errors import InputError
from coder_eval.run.regression import baseline_gates, regression_gate
from coder_eval.run_dir import RunDir
from tests.store.histories import grid, write_run

TASKS = [f"t{i}" for i in range(8)]


def test_a_called_regression_fails_with_fail_on_worse_and_is_not_gated_without(tmp_path: Path) -> None:
    before = write_run(tmp_path / "runs", "main", grid(dict.fromkeys(TASKS, "pass")))
    after = RunDir(write_run(tmp_path / "runs", "pr", grid(dict.fromkeys(TASKS, "fail")), day=1))
    store = tmp_path / "none.duckdb"
    rows, found, note = baseline_gates(after, store, str(before), "worse")
    assert note is None and found is not None and found.regressed
    (row,) = rows
    assert (row.gate, row.verdict, row.value, row.label) == ("baseline", "fail", -1.0, "vs main")
    assert row.ci_high < 0 and "8 tasks paired" in row.note
    assert [r.verdict for r in baseline_gates(after, store, str(before), "never")[0]] == ["not gated"]


def test_noise_passes_the_gate(tmp_path: Path) -> None:
    before = write_run(tmp_path / "runs", "main", grid(dict.fromkeys(TASKS, "pass")))
    after = RunDir(
        write_run(tmp_path / "runs", "pr", grid({**dict.fromkeys(TASKS, "pass"), "t0": "fail"}), day=1)
    )
    rows, _, _ = baseline_gates(after, tmp_path / "none.duckdb", str(before), "worse")
    assert [r.verdict for r in rows] == ["pass"]


def test_no_baseline_yet_adds_no_row_and_says_why(tmp_path: Path) -> None:
    after = RunDir(write_run(tmp_path / "runs", "pr", grid(dict.fromkeys(TASKS, "fail"))))
    rows, found, note = baseline_gates(after, tmp_path / "none.duckdb", "latest-on-main", "worse")
    assert (rows, found) == ([], None)
    assert note is not None and note.startswith("no baseline: latest-on-main")


def test_the_gate_options_are_checked_before_a_run(tmp_path: Path) -> None:
    store = tmp_path / "history.duckdb"
    before = write_run(tmp_path / "runs", "main", grid(dict.fromkeys(TASKS, "pass")))

    assert regression_gate(None, "never", store) == (None, "never")
    assert regression_gate(str(before), "worse", store) == (str(before), "worse")
    assert regression_gate("latest-on-main", "worse", store) == ("latest-on-main", "worse")
    with pytest.raises(InputError, match="--fail-on 'sometimes': choose worse or never"):
        regression_gate(str(before), "sometimes", store)
    with pytest.raises(InputError, match="it needs --baseline"):
        regression_gate(None, "worse", store)
    with pytest.raises(InputError, match="not a run folder"):
        regression_gate(str(tmp_path / "nowhere"), "worse", store)
    with pytest.raises(InputError, match="no such run"):
        regression_gate("no-such-run-id", "worse", store)
