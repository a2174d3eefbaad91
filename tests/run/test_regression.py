"""The baseline gate rows a run's end adds: failing only on a called regression, and only when asked."""

from __future__ import annotations

from pathlib import Path

import pytest

from coder_eval.errors import InputError
from coder_eval.manifest import AdaptiveRecord, SequenceLook, SequencePath, UntilConclusiveRule
from coder_eval.run.regression import (
    Guard,
    baseline_gates,
    check_max_drop,
    gate_plan_line,
    regression_gate,
    sequence_gate,
    skill_gates,
)
from coder_eval.run_dir import RunDir
from coder_eval.trajectory import EpisodeEnd, SkillLoad
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
    with pytest.raises(InputError, match=r"it needs --baseline .* or --until-conclusive"):
        regression_gate(None, "worse", store)
    assert regression_gate(None, "worse", store, until_conclusive=True) == (None, "worse")
    assert regression_gate(None, "worse", store, until_conclusive=None) == (None, "worse")  # the experiment's
    with pytest.raises(InputError, match="not a run folder"):
        regression_gate(str(tmp_path / "nowhere"), "worse", store)
    with pytest.raises(InputError, match="no such run"):
        regression_gate("no-such-run-id", "worse", store)


def test_a_drop_past_max_drop_fails_though_the_test_cannot_call_it(tmp_path: Path) -> None:
    """24 tasks at 87.5 %, then 62.5 % (9 tasks lost, 3 gained): p = 0.146 is not a call, and the note
    says what the suite could have called; --max-drop 0.1 fails it on the estimate."""
    tasks = [f"t{i}" for i in range(24)]
    before = write_run(
        tmp_path / "runs", "main", grid({t: "pass" if i < 21 else "fail" for i, t in enumerate(tasks)})
    )
    now = {t: "pass" if i < 12 or i >= 21 else "fail" for i, t in enumerate(tasks)}
    after = RunDir(write_run(tmp_path / "runs", "pr", grid(now), day=1))
    store = tmp_path / "none.duckdb"

    (plain,), found, _ = baseline_gates(after, store, str(before), "worse")
    assert found is not None and not found.regressed and plain.verdict == "pass"
    assert (
        plain.value == pytest.approx(-0.25)
        and "the smallest drop this suite calls with 80 % power" in plain.note
    )
    (guarded,), _, _ = baseline_gates(after, store, str(before), Guard("worse", max_drop=0.1))
    assert guarded.verdict == "fail" and "the drop -25.0 pts is past --max-drop 0.1" in guarded.note
    line = gate_plan_line(str(before), store, tasks, 1, 0.1)
    assert line is not None and line.startswith("--fail-on worse: at 24 tasks × 1 repeat a drop in pass rate")
    assert "--max-drop 0.1 guards them on the point estimate only" in line


def test_max_drop_is_checked_before_a_run() -> None:
    assert check_max_drop(None, None) is None and check_max_drop(0.1, "main") == 0.1
    with pytest.raises(InputError, match="it needs --baseline"):
        check_max_drop(0.1, None)
    with pytest.raises(InputError, match="0 < drop <= 1"):
        check_max_drop(10, "main")


def test_a_skill_offered_and_never_loaded_fails_the_gate(tmp_path: Path) -> None:
    run = RunDir(write_run(tmp_path / "runs", "pr", grid(dict.fromkeys(TASKS, "pass"), ("base", "skill"))))
    for planned in run.read_manifest().episodes:
        if planned.variant_id == "skill":
            loaded = SkillLoad(offered=["sitectl"], loaded=[], evidence="claude-code init", plugins=["team"])
            _rewrite_end(run, planned.episode_id, loaded)

    (row,) = skill_gates(run, "worse")
    assert (row.gate, row.variant_id, row.label, row.verdict) == ("skill-loaded", "skill", "sitectl", "fail")
    assert "offered in 8 episodes, loaded in 0 of the 8 that report loading (claude-code init)" in row.note
    assert [r.verdict for r in skill_gates(run, "never")] == ["not gated"]


def _rewrite_end(run: RunDir, episode: str, skills: SkillLoad) -> None:
    path = run.episode_path(episode)
    lines = path.read_text().splitlines()
    end = EpisodeEnd.model_validate_json(lines[-1]).model_copy(update={"skills": skills})
    path.write_text("\n".join([*lines[:-1], end.model_dump_json()]) + "\n")


def stopped(stop: str, decision: str) -> AdaptiveRecord:
    path = SequencePath(metric="passed", looks=[SequenceLook(task_id="t1", value=0, low=-0.4, high=0.3)])
    return AdaptiveRecord(
        rule=UntilConclusiveRule(), baseline="baseline", candidate="with_skill", seed=0, order=["t1"],
        max_tasks=1, episodes_per_task=2, paths=[path], stop=stop, decision=decision, reason="why",  # type: ignore[arg-type]
    )  # fmt: skip


@pytest.mark.parametrize(
    ("stop", "decision", "verdict"),
    [
        ("decided", "worse", "fail"),
        ("decided", "better", "pass"),
        ("decided", "no_effect", "pass"),
        ("all_tasks", "inconclusive", "pass"),
        ("blocked", "inconclusive", "fail"),
    ],
)
def test_a_run_that_stopped_at_its_answer_is_gated_as_its_decision_says(
    stop: str, decision: str, verdict: str
) -> None:
    row = sequence_gate(stopped(stop, decision), "worse")
    assert (row.gate, row.variant_id, row.verdict) == ("until-conclusive", "with_skill", verdict)
    assert row.note.startswith("blocked: why" if stop == "blocked" else f"{decision}: why")
    assert (row.ci_low, row.ci_high) == (-0.4, 0.3)
    assert sequence_gate(stopped(stop, decision), "never").verdict == "not gated"
