"""The Markdown summary: totals, the baseline's verdicts and moved tasks, the run's variants, links."""

from __future__ import annotations

from pathlib import Path

from coder_eval.analysis import load_runs
from coder_eval.analysis.answer.baseline_run import against_baseline
from coder_eval.analysis.views.markdown import run_markdown
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
    assert "**baseline better**" in text
    assert "### Reports" not in text
