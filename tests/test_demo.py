"""The offline demo (tasks/demo, experiments/skills_ab.yaml): sound graders, and an A/B run end to end.

The end-to-end test runs the real Claude Code CLI against the scripted model server on the API
tasks, one repeat per arm, and checks that the compare report states the analysis library's numbers.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import coder_eval.analysis as ca
from coder_eval.analysis.notebook import jsonable
from coder_eval.analysis.verdicts import REPORT_METRICS
from coder_eval.report import render_report
from coder_eval.task import load_tasks
from coder_eval.trajectory import read_trajectory
from tests.helpers import REPO, coder_eval

DEMO = REPO / "tasks" / "demo"
EXPERIMENT = REPO / "experiments" / "skills_ab.yaml"
TRIGGERS = DEMO / "skill_triggers.yaml"


def graded_tasks() -> list[Path]:
    """Every demo task file but the trigger dataset (its oracle cannot call the Skill tool)."""
    return sorted(p for p in DEMO.glob("*.yaml") if p != TRIGGERS)


def test_demo_graders_pass_the_reference_and_fail_doing_nothing() -> None:
    result = coder_eval("validate", str(DEMO), cwd=REPO)
    assert result.returncode == 0, result.stdout + result.stderr
    rows = re.findall(r"^│ (\S+)\s+│ (\w+)\s+│ (\w+)\s+│", result.stdout, re.MULTILINE)
    oracle = {task: outcome for task, outcome, _ in rows}
    triggers = {t.task_id for t in load_tasks([TRIGGERS])}
    assert sum(outcome == "pass" for outcome in oracle.values()) == len(graded_tasks()) == 8
    assert {task for task, outcome in oracle.items() if outcome == "skipped"} == triggers  # no Skill tool
    assert "broken" not in result.stdout


def test_trigger_rows_grade_doing_nothing_as_no_skill(tmp_path: Path) -> None:
    result = coder_eval(
        "run", str(TRIGGERS), "--agent", "none", "--run-dir", str(tmp_path / "run"), "--no-report", cwd=REPO
    )
    assert result.returncode == 1, result.stdout + result.stderr  # recall 0 fails the suite gate
    outcomes = {
        t.start.task_id: t.end.outcome
        for t in map(read_trajectory, (tmp_path / "run" / "episodes").glob("*.jsonl"))
        if t.start and t.end
    }
    rows = {t.task_id: t.dataset_row or {} for t in load_tasks([TRIGGERS])}
    assert len(rows) >= 16
    expected = {task: "fail" if row["expected_skill"] else "pass" for task, row in rows.items()}
    assert outcomes == expected


@pytest.mark.slow
def test_skills_ab_runs_end_to_end_and_the_report_states_the_library_numbers(tmp_path: Path) -> None:
    run = tmp_path / "run"
    args = ["--experiment", str(EXPERIMENT), "--tags", "api", "--repeats", "1", "-j", "4"]
    result = coder_eval("run", *args, "--run-dir", str(run), "--no-report", cwd=REPO)
    assert result.returncode == 0, result.stdout + result.stderr

    episodes = ca.load_runs(run).episodes
    assert len(episodes) == 10
    assert set(episodes.variant_id) == {"baseline", "with_skill"}
    assert episodes.scripted.all() and (episodes.outcome != "invalid").all()
    skill_calls = ca.load_runs(run).tool_calls.query("name == 'Skill'")
    assert set(skill_calls.variant_id) == {"with_skill"}

    report = render_report([run], "compare_report", out_dir=tmp_path / "reports")
    assert report.ok, report.error
    summary = json.loads(report.summary_path.read_text(encoding="utf-8"))
    v = ca.verdicts(ca.load_runs(run))
    assert (summary["baseline"], summary["candidate"]) == ("baseline", "with_skill")
    assert summary["comparisons"] == json.loads(json.dumps(jsonable(v.frame())))
    assert [row["metric"] for row in summary["comparisons"]] == list(REPORT_METRICS)
    assert summary["mde"] == jsonable(ca.mde(episodes, "with_skill", "baseline", "passed"))  # NaN: 5 tasks


@pytest.mark.slow
@pytest.mark.timeout(3600)
def test_every_surface_states_the_same_answer_on_the_demo(tmp_path: Path) -> None:
    """The real demo (API tasks and the trigger dataset, one repeat) run as a user runs it, reports,
    JUnit and all: the line it prints, run.json, JUnit, the three reports, the explorer, compare(runs)
    and the gate state the same headline tasks, effect, interval, p and verdict."""
    from tests.test_one_answer import assert_one_answer

    run, junit = tmp_path / "run", tmp_path / "junit.xml"
    args = [
        "--experiment",
        str(EXPERIMENT),
        "--tags",
        "api",
        "--tags",
        "triggers",
        "--repeats",
        "1",
        "-j",
        "4",
    ]
    result = coder_eval(
        "run", *args, "--run-dir", str(run), "--junit-xml", str(junit), cwd=tmp_path, timeout=3000
    )
    assert result.returncode == 0, result.stdout + result.stderr
    v = ca.verdicts(ca.load_runs(run))
    assert len(v.selection.tasks) == 5 and len(v.selection.classification_tasks) == 20
    assert_one_answer(run, tmp_path / "reports" / "run", result.stdout, junit)


@pytest.mark.slow
@pytest.mark.timeout(3600)
def test_demo_md_figures_are_what_the_demo_run_produces(tmp_path: Path) -> None:
    from tests.demo_figures import DOC, figures, run_demo, section

    run, code = run_demo(tmp_path)
    produced = figures(run, code)
    assert section(DOC.read_text(encoding="utf-8")) == produced, (
        "docs/demo.md's figures differ from this run: run `make demo-figures`\n" + produced
    )
