"""One answer per run: every surface states the same tasks, effect, interval, p and verdict.

The surfaces: the compare, run and classification reports (their summary.json and their HTML), the
explorer, ``compare(runs, ...)`` and ``compare_metrics(runs, ...)``, the line ``coder-eval run``
prints at the end (and records in run.json), JUnit, and the ``--min-pass-rate`` gate. Checked on a run
shaped like the demo (graded tasks and trigger-dataset rows), on two identical arms, on a broken
candidate and on a one-task run; tests/test_demo.py checks the same on the real demo.
"""

from __future__ import annotations

import html
import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

import coder_eval.analysis as ca
from coder_eval.analysis.answer.engine import REPORT_METRICS
from coder_eval.analysis.answer.wording import invalid_text
from coder_eval.analysis.stats.missingness import counts_text
from coder_eval.analysis.views.markdown import run_markdown
from coder_eval.analysis.views.notebook import jsonable
from coder_eval.analysis.views.widgets import Explorer
from coder_eval.cli.summary import print_finished
from coder_eval.run import AfterRun, Finished
from coder_eval.run.finish import record_headline
from coder_eval.run.gates import evaluate_gates
from coder_eval.run.junit import write_junit
from coder_eval.run.render import render_report
from coder_eval.run_dir import RunDir
from tests.analysis.builders import write_ab_run

pytestmark = pytest.mark.slow
ARMS = ("baseline", "with_skill")


def same(value: Any) -> Any:
    """A value as it reads back from any JSON surface."""
    return json.loads(json.dumps(jsonable(value)))


def demo_like(root: Path) -> Path:
    """8 graded tasks × 3 repeats (the skill helps on most) and 10 trigger rows, as the demo has."""
    base = {f"task{i}": ["pass", "fail", "fail"] if i % 2 else ["pass", "pass", "fail"] for i in range(8)}
    skill = {f"task{i}": ["pass", "pass", "pass"] if i != 3 else ["fail", "fail", "pass"] for i in range(8)}
    labels = {
        f"row{i}": [("sitectl" if i % 4 else "none", "sitectl" if i < 6 else "none")] * 3 for i in range(10)
    }
    quiet = {f"row{i}": [("none", "sitectl" if i < 6 else "none")] * 3 for i in range(10)}
    costs = {f"task{i}": 0.01 * (i + 1) for i in range(8)}
    return write_ab_run(
        root,
        "demo",
        {"baseline": base, "with_skill": skill},
        {"baseline": quiet, "with_skill": labels},
        costs,
    )


def identical(root: Path) -> Path:
    tasks = {f"task{i}": ["pass", "fail", "pass"] if i % 3 else ["fail"] * 3 for i in range(7)}
    return write_ab_run(root, "identical", {arm: tasks for arm in ARMS})


def broken(root: Path) -> Path:
    """The candidate fails every episode it ran; two of its episodes are invalid."""
    base = {f"task{i}": ["pass", "pass"] if i % 4 else ["pass", "fail"] for i in range(9)}
    bad = {f"task{i}": ["fail", "invalid"] if i < 2 else ["fail", "fail"] for i in range(9)}
    return write_ab_run(root, "broken", {"baseline": base, "with_skill": bad})


def one_task(root: Path) -> Path:
    return write_ab_run(
        root, "one", {"baseline": {"only": ["fail", "pass"]}, "with_skill": {"only": ["pass"] * 2}}
    )


def invalid_when_failing(root: Path) -> Path:
    """The candidate's provider failures fall exactly where the baseline passes: left out, they make it
    look better (7 tasks to 0); counted as failures, they explain the difference."""
    base = {f"task{i}": ["pass" if i < 6 else "fail"] for i in range(14)}
    cand = {f"task{i}": ["invalid:provider" if i < 4 else "fail" if i == 13 else "pass"] for i in range(14)}
    return write_ab_run(root, "informative", {"baseline": base, "with_skill": cand})


RUNS = {
    "demo-like": demo_like,
    "identical arms": identical,
    "broken candidate": broken,
    "one task": one_task,
    "invalid when failing": invalid_when_failing,
}


def assert_one_answer(run: Path, reports: Path, printed: str, junit: Path | None = None) -> None:
    """Every surface of ``run`` against the declared comparison computed once here."""
    loaded = ca.load_runs(run)
    v = ca.verdicts(loaded)
    record, line = same(v.headline()), v.line()
    assert v.available and record["verdict"] in ("a_better", "b_better", "inconclusive")
    assert record["tasks"] == v.selection.tasks and not set(record["tasks"]) & set(
        v.selection.classification_tasks
    )
    null = 1.0 if record["basis"] == "ratio" else 0.0
    excluded = record["verdict_ci_low"] > null or record["verdict_ci_high"] < null
    p_verdict = max(record["p_value"], record["p_worst"] or 0.0)  # the bounds of invalid episodes too
    assert (record["verdict"] != "inconclusive") == excluded == (p_verdict < 0.05)
    invalid = ca.invalid_counts(v.selection.episodes, v.candidate)
    assert record["invalid_candidate"] == invalid and (f"{v.candidate} {counts_text(invalid)}" in line) == (
        sum(invalid.values()) > 0
    )
    summaries = sorted(reports.glob("*.summary.json"))
    assert {p.name for p in summaries} >= {"compare_report.summary.json", "run_report.summary.json"}
    for path in summaries:  # the reports: the same record in each summary.json, the same line in each page
        assert json.loads(path.read_text(encoding="utf-8"))["verdict"] == record, path.name
        page = path.with_name(path.name.replace(".summary.json", ".html")).read_text(encoding="utf-8")
        assert html.escape(line, quote=False) in page, path.name
    compared = json.loads((reports / "compare_report.summary.json").read_text(encoding="utf-8"))
    assert compared["comparisons"] == same(v.frame()) and compared["headline_tasks"] == record["tasks"]
    explorer = Explorer(run)  # the explorer, on its defaults
    assert explorer.verdicts is not None and same(explorer.verdicts.headline()) == record
    assert explorer.comparison.equals(v.frame())
    alone, primary = same(ca.compare(loaded, v.candidate, v.baseline)), same(v.primary)  # compare(runs, ...)
    assert alone == primary | {"p_adjusted": None}  # one comparison: no family to adjust over
    holm = ca.compare_metrics(loaded, v.candidate, v.baseline, REPORT_METRICS)
    assert same(holm["p_adjusted"].tolist()) == [
        row["p_adjusted"] for row in same(v.frame().to_dict("records"))
    ]
    assert f"headline: {line}" in printed  # the console
    assert RunDir(run).read_manifest().headline == record
    if junit is not None:
        properties = {p.get("name"): p.get("value") for p in ET.parse(junit).getroot().iter("property")}
        assert properties["headline.verdict"] == record["verdict"] and properties["headline.line"] == line
        assert float(properties["headline.p_value"]) == record["p_value"]
        assert float(properties["headline.verdict_ci_low"]) == record["verdict_ci_low"]
    gates = evaluate_gates(loaded, list(ARMS), [], min_pass_rate=0.5)
    expected = ca.summarize(v.selection.episodes).set_index("variant_id")["mean"]
    assert {g.variant_id: g.value for g in gates} == pytest.approx(expected.to_dict())
    assert all(v.selection.description in g.note for g in gates)
    for g in gates:  # each gate row counts its variant's invalid episodes, by cause
        causes = ca.invalid_counts(v.selection.episodes, g.variant_id)
        assert f"{sum(causes.values())} invalid excluded" in g.note
        assert all(f"{cause} {n}" in g.note for cause, n in causes.items())
    summary = run_markdown(run, reports=reports)  # the Markdown summary
    assert v.primary is not None
    assert invalid_text(v.primary) in summary


@pytest.mark.parametrize("make", RUNS.values(), ids=RUNS.keys())
def test_every_surface_states_the_same_answer(
    make: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = make(tmp_path / "runs")
    reports = tmp_path / "reports"
    templates = [("compare_report", {}), ("run_report", {})]
    if ca.load_runs(run).criteria["expected_label"].notna().any():
        templates.append(("classification_report", {"criterion": "skill"}))
    for template, params in templates:
        result = render_report([run], template, params, out_dir=reports)
        assert result.ok, result.error
    directory = RunDir(run)
    line, error = record_headline(directory, directory.read_manifest())  # what a run does after its episodes
    print_finished(
        AfterRun(), Finished(headline_line=line, headline_error=error)
    )  # and `coder-eval run` prints
    write_junit(directory, tmp_path / "junit.xml")
    assert_one_answer(run, reports, capsys.readouterr().out, tmp_path / "junit.xml")


def test_invalid_episodes_that_could_explain_the_difference_leave_it_uncalled(tmp_path: Path) -> None:
    v = ca.verdicts(ca.load_runs(invalid_when_failing(tmp_path)))
    assert v.primary is not None and v.primary.p_value < 0.05  # the test alone calls it
    assert v.primary.verdict == "inconclusive" and v.primary.verdict_ci_low < 0 < v.primary.verdict_ci_high
    assert "with_skill 4 (provider 4), baseline 0" in v.line() and "could explain it" in v.line()


def test_the_demo_like_run_leaves_its_trigger_rows_out_of_the_headline(tmp_path: Path) -> None:
    v = ca.verdicts(ca.load_runs(demo_like(tmp_path)))
    assert len(v.selection.tasks) == 8 and len(v.selection.classification_tasks) == 10
    pooled = ca.verdicts(ca.load_runs(tmp_path / "demo"), ca.Declaration(classification=True))
    assert pooled.primary is not None and pooled.primary.n_tasks == 18  # only when asked to pool them
