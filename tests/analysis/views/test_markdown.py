"""The Markdown summary: totals, the baseline's verdicts and moved tasks, the run's variants, links."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from coder_eval.analysis import load_runs
from coder_eval.analysis.answer.baseline_run import against_baseline
from coder_eval.analysis.views.markdown import change_words, run_markdown
from coder_eval.manifest import GateRecord
from coder_eval.run_dir import RunDir
from tests.store.histories import grid, write_run

TASKS = [f"t{i}" for i in range(8)]


def test_a_regression_is_called_with_its_interval_and_the_tasks_that_got_worse(tmp_path: Path) -> None:
    before = write_run(tmp_path / "runs", "main", grid(dict.fromkeys(TASKS, "pass")))
    after = write_run(tmp_path / "runs", "pr", grid(dict.fromkeys(TASKS, "fail")), day=1, cost=0.3)
    found = against_baseline(load_runs(after), load_runs(before), {}, {})
    (tmp_path / "reports" / "pr").mkdir(parents=True)
    (tmp_path / "reports" / "pr" / "run_report.html").write_text("<html></html>")
    text = run_markdown(after, found, link_base="https://ci.example/a/", reports=tmp_path / "reports" / "pr")
    assert text.startswith("## coder_eval: run `pr`\n")
    assert "8 episodes: 0 pass, 8 fail, 0 invalid (invalid excluded) · cost $2.40 · main @ c0001" in text
    assert "**Regression: called worse than the baseline**" in text
    assert "| pass rate | 100.0% | 0.0% | -100.0 pts [-100.0 pts, " in text
    assert "worse on 8 tasks, better on 0" in text and "| `t0` | 100% | 0% |" in text
    assert "- [run_report](https://ci.example/a/run_report.html)" in text


def test_without_a_baseline_the_variants_of_the_run_are_compared(tmp_path: Path) -> None:
    both = {
        **grid(dict.fromkeys(TASKS, "pass"), ("baseline",)),
        **grid(dict.fromkeys(TASKS, "fail"), ("skill",)),
    }
    run = write_run(tmp_path / "runs", "ab", both)
    text = run_markdown(run, baseline_note="no baseline: nothing compared", reports=tmp_path / "none")
    assert "### Against the baseline\n\nno baseline: nothing compared" in text
    assert "### `skill` against `baseline` in this run" in text
    assert "| metric | `baseline` | `skill` |" in text and "| pass rate | 100.0% | 0.0% |" in text
    assert "**worse**" in text and "better" not in text.split("in this run")[1]
    assert "### Reports" not in text


def test_a_scripted_run_says_so_and_rows_without_data_are_left_out(tmp_path: Path) -> None:
    before = write_run(tmp_path / "runs", "main", grid(dict.fromkeys(TASKS, "pass")), cost=0.0, scripted=True)
    after = write_run(
        tmp_path / "runs", "pr", grid(dict.fromkeys(TASKS, "pass")), day=1, cost=0.0, scripted=True
    )
    text = run_markdown(after, against_baseline(load_runs(after), load_runs(before), {}, {}))
    assert "**Scripted model**: every episode ran against coder_eval's scripted model server" in text
    assert "| pass rate | 100.0% | 100.0% |" in text and "| tokens |" in text
    assert "| cost |" not in text  # $0 on both sides: a scripted model has no price, nothing to compare
    real = write_run(tmp_path / "runs", "real", grid(dict.fromkeys(TASKS, "pass")), day=2)
    assert "Scripted model" not in run_markdown(real)


def test_amounts_read_as_what_the_candidate_is_and_links_take_a_template(tmp_path: Path) -> None:
    before = write_run(tmp_path / "runs", "main", grid(dict.fromkeys(TASKS, "pass")))
    after = write_run(tmp_path / "runs", "pr", grid(dict.fromkeys(TASKS, "fail")), day=1, cost=0.3)
    found = against_baseline(load_runs(after), load_runs(before), {}, {})
    cost = next(c for c in found.arms[0].verdicts.comparisons if c.metric == "cost_usd")
    slower = dataclasses.replace(cost, metric="duration_s", basis="ratio", ratio=1.2, verdict="b_better")
    assert change_words(slower) == "slower ×1.2"
    assert change_words(dataclasses.replace(slower, ratio=0.8, verdict="a_better")) == "faster ×0.8"
    assert change_words(dataclasses.replace(cost, verdict="inconclusive")) == "inconclusive"
    (tmp_path / "reports" / "pr" / "sub").mkdir(parents=True)
    (tmp_path / "reports" / "pr" / "sub" / "run_report.html").write_text("<html></html>")
    text = run_markdown(after, found, "https://ci.example/7#{path}", reports=tmp_path / "reports" / "pr")
    assert "| cost | 0.1 | 0.3 | +0.2 [+0.2, +0.2] | 0.008 | **dearer +0.2** |" in text
    assert "- [sub/run_report](https://ci.example/7#sub/run_report.html)" in text
    assert text.endswith("\n") and not text.endswith("\n\n")


def test_the_gates_the_run_failed_are_listed(tmp_path: Path) -> None:
    run = write_run(tmp_path / "runs", "gated", grid(dict.fromkeys(TASKS, "pass")))
    folder = RunDir.open(run)
    manifest = folder.read_manifest()
    manifest.gates = [
        GateRecord(gate="skill-triggers:skill", variant_id="with_skill", metric="recall", threshold=0.8,
                   value=0.1),
        GateRecord(gate="min_pass_rate", variant_id="with_skill", metric="passed", threshold=0.5, value=0.9,
                   verdict="pass"),
    ]  # fmt: skip
    folder.write_manifest(manifest)
    text = run_markdown(run)
    assert "### Gates: 1 of 2 failed\n\n- `with_skill` skill-triggers:skill: recall 0.10 (min 0.80)" in text
    assert "min_pass_rate" not in text
