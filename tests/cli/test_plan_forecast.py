"""``coder-eval plan``'s forecast: from earlier runs of the same tasks (named), and with
``--until-conclusive`` the episodes a decision is likely to take and whether a budget reaches it."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import REPO, coder_eval

AB = str(REPO / "experiments" / "coin_ab.yaml")


def test_plan_forecasts_from_an_earlier_run_and_says_which(tmp_path: Path) -> None:
    none = coder_eval("plan", "-e", AB, "--history", str(tmp_path / "runs"), cwd=REPO)
    coder_eval(
        "run",
        "-e",
        AB,
        "--max-tasks",
        "4",
        "--run-dir",
        str(tmp_path / "runs" / "pilot"),
        "--no-report",
        cwd=REPO,
    )

    plan = coder_eval("plan", "-e", AB, "--history", str(tmp_path / "runs"), "--max-cost-usd", "2", cwd=REPO)

    assert none.returncode == 0 and "forecast: no earlier run of these tasks" in none.stdout
    text = " ".join(plan.stdout.split())
    assert plan.returncode == 0, plan.stderr
    assert "forecast from earlier runs" in text and "4 of 60 tasks, from" in text and " pilot " in text
    assert "interval approximate: few tasks seen" in text
    assert "until conclusive, for an effect of +0.20 on the pass rate (delta 0.2, at most 60 tasks" in text
    assert "no earlier cost of these tasks: whether $2 reaches a decision is not known" in text
    assert "a fixed design of the same power" in text and "the sequence expects" in text
    assert "it decides on passed: better or worse when the interval of the difference excludes 0" in text


def test_plan_without_the_rule_prints_no_decision_forecast(tmp_path: Path) -> None:
    plan = coder_eval("plan", "-e", AB, "--fixed-design", "--history", str(tmp_path), cwd=REPO)

    assert plan.returncode == 0 and "until conclusive" not in plan.stdout


def test_episode_and_run_ids_print_whole_on_a_narrow_terminal(tmp_path: Path) -> None:
    from coder_eval.manifest import read_manifest

    pilot = tmp_path / "runs" / "pilot-20261206-063303-300425"
    coder_eval("run", "-e", AB, "--max-tasks", "2", "--run-dir", str(pilot), "--no-report", cwd=REPO)
    plan = coder_eval("plan", "-e", AB, "--history", str(tmp_path / "runs"), cwd=REPO, columns=60)

    assert plan.returncode == 0, plan.stderr
    words = plan.stdout.split()
    assert pilot.name in words  # the run id the forecast comes from, whole
    assert {e.episode_id for e in read_manifest(pilot).episodes} <= set(words)  # every episode id, whole
