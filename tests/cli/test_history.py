"""``history``, ``run --baseline/--fail-on`` and ``report --format markdown`` as a CI job uses them,
on tasks whose command agent passes or fails as the command line says (no model, fast)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.helpers import coder_eval, write_task

TASK = """
task_id: t{i}
initial_prompt: write ok
agent: {{kind: command, command: "echo ok > ok.txt"}}
sandbox: {{driver: tempdir}}
success_criteria:
  - {{type: file_contains, path: ok.txt, includes: [ok]}}
"""
FAILS = "agent.command=echo no > ok.txt"


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    for i in range(8):
        write_task(tmp_path / "tasks", TASK.format(i=i), f"t{i}.yaml")
    return tmp_path


def run(suite: Path, branch: str, *args: str) -> tuple[int, str]:
    env = {**os.environ, "CODER_EVAL_BRANCH": branch}
    env.pop("CODER_EVAL_STORE", None)
    done = coder_eval("run", "tasks", "--no-report", "-j", "4", *args, cwd=suite, env=env)
    return done.returncode, done.stdout + done.stderr


def test_a_called_regression_fails_the_run_and_noise_does_not(suite: Path) -> None:
    assert run(suite, "main")[0] == 0
    code, text = run(suite, "pr", "-D", FAILS, "--baseline", "latest-on-main", "--fail-on", "worse")
    assert code == 1, text
    assert (
        "baseline │ default" in text
        and "FAIL" in text
        and "p = 0.008: baseline better; 8 tasks paired" in text
    )
    gates = json.loads((suite / "runs" / "latest" / "run.json").read_text())["gates"]
    assert [(g["gate"], g["verdict"]) for g in gates] == [("baseline", "fail")]
    code, text = run(suite, "pr", "--baseline", "latest-on-main", "--fail-on", "worse")
    assert code == 0, text


def test_a_first_run_on_a_branch_has_no_baseline_and_passes(suite: Path) -> None:
    code, text = run(suite, "main", "--baseline", "latest-on-main", "--fail-on", "worse")
    assert code == 0
    assert "no baseline: latest-on-main names no completed run" in text


def test_a_baseline_that_names_nothing_exits_2_before_running(suite: Path) -> None:
    code, text = run(suite, "main", "--baseline", "nosuchrun")
    assert code == 2 and "no such run" in text
    assert not (suite / "runs" / "latest").exists()
    code, text = run(suite, "main", "--fail-on", "worse")
    assert code == 2 and "it needs --baseline" in text


def test_a_changed_task_is_not_paired_and_the_summary_says_so(suite: Path) -> None:
    run(suite, "main")
    write_task(suite / "tasks", TASK.format(i=3).replace("write ok", "write ok, please"), "t3.yaml")
    run(suite, "pr", "-D", FAILS)
    done = coder_eval(
        "report", "runs/latest", "--format", "markdown", "--baseline", "latest-on-main", cwd=suite
    )
    assert done.returncode == 0, done.stderr
    assert "pairing: 7 tasks paired; not paired: 1 changed since the baseline (t3)" in done.stdout
    assert "| pass rate | 100.0% | 0.0% |" in done.stdout


def test_history_lists_indexed_runs_and_filters_them(suite: Path) -> None:
    run(suite, "main")
    run(suite, "pr", "--no-index")
    listed = coder_eval("history", cwd=suite)
    assert listed.returncode == 0 and listed.stdout.count("completed") == 1
    indexed = coder_eval("history", "--index", "runs", "--branch", "pr", cwd=suite)
    assert "1 runs indexed, 1 unchanged, 0 unreadable" in indexed.stderr
    assert indexed.stdout.count("completed") == 1 and " pr " in indexed.stdout
    assert "no runs match" in coder_eval("history", "--task", "nosuch", cwd=suite).stdout
    assert coder_eval("history", "--rebuild", cwd=suite).returncode == 2


def test_the_experiment_file_can_hold_the_gate(suite: Path) -> None:
    (suite / "gate.yaml").write_text(
        "experiment_id: gated\nvariants: [{variant_id: default}]\nbaseline: {run: latest-on-main}\n"
    )
    run(suite, "main")
    code, text = run(suite, "pr", "-e", "gate.yaml", "-D", FAILS)
    assert code == 1 and "baseline better" in text, text
    (suite / "gate.yaml").write_text(
        "experiment_id: gated\nvariants: [{variant_id: default}]\nbaseline: {run: nosuchrun}\n"
    )
    code, text = run(suite, "pr", "-e", "gate.yaml")
    assert code == 1 and "no such run" in text, text


def test_history_tasks_finds_the_planted_flaky_and_constant_tasks(tmp_path: Path) -> None:
    from tests.analysis.stats.test_items import planted
    from tests.store.histories import write_run

    for i in range(4):
        write_run(tmp_path / "runs", f"run{i}", planted(i), day=i)
    done = coder_eval("history", "--index", "runs", "--tasks", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert any(line.split()[:3] == ["flaky", "sha256:a/flaky", "4/4,"] for line in lines)
    assert any(line.split()[:3] == ["easy", "always", "passes"] for line in lines)
    assert any(line.split()[:3] == ["hard", "always", "fails"] for line in lines)
    assert "run --exclude-tags quarantine" in done.stdout
    assert "steady" not in [line.split()[0] for line in lines if "sha256" in line]
