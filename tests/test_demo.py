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
from coder_eval.analysis.answer.engine import REPORT_METRICS
from coder_eval.analysis.views.notebook import jsonable
from coder_eval.run.render import render_report
from coder_eval.task import load_tasks
from coder_eval.trajectory import read_trajectory
from tests.demo_figures import DemoRun
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


QUICK_LOOK = ("--experiment", str(EXPERIMENT), "--tags", "api", "--repeats", "1")
"""docs/demo.md's quick look: the five API tasks, one repeat per arm."""


@pytest.fixture(scope="module")
def quick_look(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The quick look run once (fixed design, no reports), for the tests that read a fixed run."""
    folder = tmp_path_factory.mktemp("quick-look")
    result = coder_eval(
        "run", *QUICK_LOOK, "-j", "4", "--run-dir", str(folder / "run"), "--no-report", cwd=folder
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return folder / "run"


@pytest.fixture
def demo(demo_run: DemoRun) -> DemoRun:
    """The whole demo run once, as ``make run`` runs it (reports, a JUnit file)."""
    return demo_run


@pytest.mark.slow
def test_skills_ab_runs_end_to_end_and_the_report_states_the_library_numbers(
    quick_look: Path, tmp_path: Path
) -> None:
    run = quick_look
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
def test_every_surface_states_the_same_answer_on_the_demo(demo: DemoRun) -> None:
    """The whole demo run as a user runs it, reports, JUnit and all: the line it prints, run.json,
    JUnit, the three reports, the explorer, compare(runs) and the gate state the same headline
    tasks, effect, interval, p and verdict."""
    from tests.test_one_answer import assert_one_answer

    assert demo.exit_code == 0, demo.stdout
    v = ca.verdicts(ca.load_runs(demo.run))
    assert len(v.selection.tasks) == 8 and len(v.selection.classification_tasks) == 20
    assert_one_answer(demo.run, demo.reports, demo.stdout, demo.junit)


@pytest.mark.slow
@pytest.mark.timeout(3600)
def test_demo_md_figures_are_what_the_demo_run_produces(demo: DemoRun) -> None:
    from tests.demo_figures import DOC, figures, section

    produced = figures(demo.run, demo.exit_code)
    assert section(DOC.read_text(encoding="utf-8")) == produced, (
        "docs/demo.md's figures differ from this run: run `make demo-figures`\n" + produced
    )


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_the_demo_until_conclusive_says_why_it_stopped_and_plan_forecasts_its_cost(
    quick_look: Path, tmp_path: Path
) -> None:
    """The demo's API tasks run ``--until-conclusive``: the stop, its reason in words and the sequence
    plot reach the console, run.json and the compare report; from that run, ``plan`` forecasts the
    tokens of a fixed run of the same tasks, and a real one lands inside the forecast's interval (its
    cost is $0: a scripted model has no price)."""
    from coder_eval.analysis.stats.earlier_runs import history
    from coder_eval.analysis.stats.forecast import spend
    from coder_eval.manifest import read_manifest

    runs = tmp_path / "runs"
    args = list(QUICK_LOOK)
    stopped = coder_eval(
        "run", *args, "-j", "4", "--until-conclusive", "--run-dir", str(runs / "pilot"), cwd=tmp_path
    )
    assert stopped.returncode == 0, stopped.stdout + stopped.stderr
    record = read_manifest(runs / "pilot").adaptive
    assert record is not None and record.stop is not None and record.decision is not None
    words = f"{record.decision} after {record.decided_tasks} of at most {record.max_tasks} tasks"
    said = " ".join(stopped.stdout.split())
    assert words in record.reason and words in said
    quoted = " ".join((REPO / "docs" / "demo.md").read_text(encoding="utf-8").split())
    assert re.search(r'\("(until conclusive: [^"]+)"\)', quoted)[1] in said  # type: ignore[index]
    assert len(record.paths[0].looks) == record.decided_tasks  # the whole path is kept
    html = (tmp_path / "reports" / "pilot" / "compare_report.html").read_text(encoding="utf-8")
    section = html[html.index("Stopping at the answer") :]
    assert words in section and "image/png" in section[: section.index("How many tasks")]

    planned = coder_eval("plan", *args, "--history", str(runs), cwd=tmp_path)
    assert planned.returncode == 0 and "forecast from earlier runs" in planned.stdout, planned.stdout
    tasks = {e.task_id for e in read_manifest(runs / "pilot").episodes}
    seen = history(runs, tasks)
    forecast = {arm: spend(arm_seen, "total_tokens", len(tasks)) for arm, arm_seen in seen.items()}

    fixed = ca.load_runs(quick_look).episodes  # a fixed run; a scripted model's episodes cost $0
    assert fixed["cost_usd"].sum() == 0 and all(
        spend(s, "cost_usd", len(tasks)).mean == 0 for s in seen.values()
    )
    real = fixed.groupby("variant_id")["total_tokens"].sum()
    assert set(forecast) == set(real.index) == {"baseline", "with_skill"}
    for arm, tokens in real.items():
        expected = forecast[str(arm)]
        assert expected is not None and expected.low <= tokens <= expected.high, (arm, tokens, expected)
