"""Ordinary outcomes that made a report fail or print nonsense, each rendered for real: both arms agree,
the candidate loses every task, one task, a recall of 4 out of 4, negative amounts, Inspect AI logs
where one model is always right, and the explorer on a run with one variant."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import pytest

from coder_eval.analysis.views.widgets import Explorer
from coder_eval.run.render import render_report
from tests.analysis.builders import write_ab_run

pytestmark = pytest.mark.slow
FAST = 199


def rendered(run_dirs: list[Path], template: str, out: Path, **params: str) -> dict[str, Any]:
    result = render_report(run_dirs, template, params, out_dir=out)
    assert result.ok, result.error
    summary: dict[str, Any] = json.loads(result.summary_path.read_text(encoding="utf-8"))
    return summary


def by_metric(summary: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {row["metric"]: row for row in summary["comparisons"]}


def excludes_null(row: dict[str, Any]) -> bool:
    null = 1.0 if row["basis"] == "ratio" else 0.0
    low, high = row["verdict_ci_low"], row["verdict_ci_high"]
    return low is not None and high is not None and (low > null or high < null)


def assert_consistent(summary: dict[str, Any]) -> None:
    """Every metric: called exactly when the verdict's interval excludes "no difference"."""
    for row in summary["comparisons"]:
        assert (row["verdict"] != "inconclusive") == excludes_null(row), row["metric"]


def test_both_arms_agree_on_every_task(tmp_path: Path) -> None:
    """All pass in both arms, identical costs: p = 1, inconclusive, no MDE of 1e-14 anywhere."""
    arms = {v: {f"t{i}": ["pass"] * 3 for i in range(8)} for v in ("baseline", "with_skill")}
    run = write_ab_run(tmp_path, "agree", arms)
    summary = rendered([run], "compare_report", tmp_path / "report")
    rows = by_metric(summary)
    assert summary["verdict"]["verdict"] == "inconclusive" and summary["verdict"]["p_value"] == 1.0
    assert rows["passed"]["verdict_ci_low"] < 0 < rows["passed"]["verdict_ci_high"]
    assert rows["cost_usd"]["mde_note"] == "undefined: no spread in the paired differences"
    assert all(row["mde"] is None or row["mde"] > 1e-3 for row in summary["comparisons"])
    planned = [v for row in summary["plan"] for k, v in row.items() if k.startswith("mde")]
    assert all(v is None or v > 1e-3 for v in planned)
    assert_consistent(summary)


def test_the_candidate_loses_every_task(tmp_path: Path) -> None:
    """Observed difference −1: the baseline is better, and the power of that effect is computed."""
    run = write_ab_run(
        tmp_path,
        "loses",
        {
            "baseline": {f"t{i}": ["pass"] for i in range(8)},
            "with_skill": {f"t{i}": ["fail"] for i in range(8)},
        },
    )
    summary = rendered([run], "compare_report", tmp_path / "report")
    verdict = summary["verdict"]
    assert (verdict["verdict"], verdict["effect"], verdict["p_value"]) == ("b_better", -1.0, 2 / 2**8)
    assert verdict["verdict_ci_high"] < 0 and summary["power_observed"] == 1.0
    assert_consistent(summary)


def test_a_one_task_run(tmp_path: Path) -> None:
    run = write_ab_run(
        tmp_path, "one", {v: {"only": ["pass", "fail", "pass"]} for v in ("baseline", "with_skill")}
    )
    summary = rendered([run], "compare_report", tmp_path / "report")
    rows = by_metric(summary)
    assert summary["verdict"]["n_tasks"] == 1 and summary["verdict"]["verdict"] == "inconclusive"
    assert rows["passed"]["mde_note"] == "planning needs at least 2 paired tasks" and summary["mde"] is None
    assert_consistent(summary)
    page = (tmp_path / "report" / "compare_report.html").read_text(encoding="utf-8")
    assert "planning needs at least 2 tasks" in page  # said in the planning section, not raised


def test_a_recall_of_four_out_of_four_in_a_cluster_bootstrap(tmp_path: Path) -> None:
    """Two variants put two items on each task (a cluster bootstrap); the four tasks that expect the
    label all observe it. Resamples without such a task say nothing about recall: not [0, 1]."""
    rows = {f"row{i}": [("sitectl", "sitectl")] if i < 4 else [("none", "none")] for i in range(10)}
    arms = {v: {"graded": ["pass"]} for v in ("baseline", "with_skill")}
    run = write_ab_run(tmp_path, "recall", arms, triggers={"baseline": rows, "with_skill": rows})
    summary = rendered([run], "classification_report", tmp_path / "report", criterion="skill")
    (label,) = [row for row in summary["per_label"] if row["label"] == "sitectl"]
    assert label["recall"] == 1.0 and label["recall_low"] > 0.5 and label["recall_high"] == 1.0
    assert "pooled Wilson" in label["method"]


def test_negative_amounts_say_so(tmp_path: Path) -> None:
    costs = {f"t{i}": (-0.02 if i % 3 == 0 else 0.01 * (i + 1)) for i in range(8)}
    arms = {v: {f"t{i}": ["pass", "fail"] for i in range(8)} for v in ("baseline", "with_skill")}
    run = write_ab_run(tmp_path, "negative", arms, costs=costs)
    summary = rendered([run], "compare_report", tmp_path / "report")
    cost = by_metric(summary)["cost_usd"]
    assert cost["basis"] == "difference" and "a task mean is negative" in cost["ratio_method"]
    assert "is 0" not in cost["ratio_method"]
    assert_consistent(summary)


def test_the_inspect_example_of_the_interop_docs_renders_the_compare_report(tmp_path: Path) -> None:
    """docs/interop.md's example: one mock model always right, one always off by one, 8 samples × 3
    epochs. Every task differs by exactly 1 (no spread): the report renders and calls it."""
    text = (Path(__file__).parent.parent / "docs" / "interop.md").read_text(encoding="utf-8")
    sample = re.search(r"```python\n(import re\n.*?)```", text, re.DOTALL)
    assert sample is not None
    code = sample.group(1).split("\nruns = load_runs")[0]  # the example up to the eval() call
    pytest.importorskip("inspect_ai")
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(tmp_path)  # the example writes inspect-logs/ where it runs
        exec(compile(code, "interop.md", "exec"), {})
    logs = sorted((tmp_path / "inspect-logs").glob("*.eval"))
    summary = rendered(
        logs, "compare_report", tmp_path / "report", baseline="mockllm/sloppy", candidate="mockllm/exact"
    )
    verdict = summary["verdict"]
    assert (verdict["verdict"], verdict["effect"], verdict["n_tasks"]) == ("a_better", 1.0, 8)
    assert verdict["verdict_ci_low"] > 0 and verdict["p_value"] == 2 / 2**8
    assert_consistent(summary)


def test_the_explorer_opens_on_the_summary_when_the_newest_run_has_one_variant(tmp_path: Path) -> None:
    write_ab_run(
        tmp_path, "20250101-a", {v: {f"t{i}": ["pass"] for i in range(3)} for v in ("baseline", "cand")}
    )
    write_ab_run(tmp_path, "20250102-b", {"baseline": {f"t{i}": ["pass", "fail"] for i in range(3)}})
    explorer = Explorer(tmp_path, n_resamples=FAST)
    assert explorer.runs.value == ("20250102-b",) and explorer.error is None
    assert explorer.comparison.empty and "one variant ('baseline')" in explorer.note
    assert set(explorer.summary["variant_id"]) == {"baseline"} and len(explorer.summary) == 7
    assert "No comparison" in explorer.status.value
    assert explorer.views["summary"].outputs and explorer.views["amounts"].outputs
    explorer.runs.value = ("20250101-a",)
    assert not explorer.comparison.empty and explorer.note == ""
    assert math.isclose(explorer.comparison.iloc[0]["p_value"], 1.0)
