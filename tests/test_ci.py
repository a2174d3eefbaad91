"""The CI recipe of docs/ci.md run locally: the workflow file's own steps (install and the artifact
steps aside), on a main branch and then on a pull request that changed the skill, through the real
Claude Code CLI against the scripted model."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.helpers import REPO

WORKFLOW = REPO / "docs" / "ci" / "coder-eval.yml"
LOCAL_ONLY = "--tags api --tags docs --repeats 1 --no-report"
"""RUN_OPTIONS for the local run: the 8 graded demo tasks once (the trigger dataset and reports left out)."""


def job() -> dict:
    return yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))["jobs"]["eval"]


def step_env(tmp_path: Path, branch: str) -> dict[str, str]:
    """The job's env with what GitHub would fill in given locally, and no API key."""
    env = {k: str(v) for k, v in job()["env"].items() if "${{" not in str(v)}
    env |= {"CODER_EVAL_BRANCH": branch, "RUN_OPTIONS": LOCAL_ONLY, "REPORTS_URL": "https://ci.example/run/1",
            "GITHUB_STEP_SUMMARY": str(tmp_path / f"step-summary-{branch}.md")}  # fmt: skip
    base = {k: v for k, v in os.environ.items() if k not in ("ANTHROPIC_API_KEY", "CODER_EVAL_STORE")}
    return {**base, **env, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}


def run_step(step_id: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    (step,) = [s for s in job()["steps"] if s.get("id") == step_id]
    return subprocess.run(["bash", "-e", "-c", step["run"]], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=1800, check=False)  # fmt: skip


def test_the_workflow_keeps_the_history_the_baseline_is_read_from() -> None:
    steps = job()["steps"]
    store = job()["env"]["CODER_EVAL_STORE"]
    kept = [s for s in steps if s.get("uses", "").startswith("actions/upload-artifact")]
    assert any(s["with"]["name"] == "coder-eval-history" and s["with"]["path"] == "history/" for s in kept)
    assert store.startswith("history/")
    assert (
        "--name coder-eval-history --dir history" in next(s for s in steps if s.get("id") == "restore")["run"]
    )
    assert '--max-cost-usd "$MAX_COST_USD"' in next(s for s in steps if s.get("id") == "eval")["run"]


@pytest.mark.slow
@pytest.mark.timeout(3600)
def test_the_recipe_gates_a_changed_skill_against_main(tmp_path: Path) -> None:
    shutil.copytree(REPO / "tasks" / "demo", tmp_path / "tasks" / "demo")
    (tmp_path / "docs" / "ci").mkdir(parents=True)
    shutil.copy(REPO / "docs" / "ci" / "skill-gate.yaml", tmp_path / "docs" / "ci")

    main = run_step("eval", tmp_path, step_env(tmp_path, "main"))
    assert main.returncode == 0, main.stdout + main.stderr
    assert "no baseline: latest-on-main names no completed run" in main.stderr
    first = (tmp_path / "runs" / "latest").readlink()
    assert run_step("summary", tmp_path, step_env(tmp_path, "main")).returncode == 0

    skill = tmp_path / "tasks" / "demo" / "plugins" / "site-tools" / "skills" / "sitectl" / "SKILL.md"
    skill.write_text(skill.read_text(encoding="utf-8").replace("name: sitectl", "name: site-helper", 1))
    pr = run_step("eval", tmp_path, step_env(tmp_path, "pr"))
    summary = run_step("summary", tmp_path, step_env(tmp_path, "pr"))
    assert summary.returncode == 0, summary.stderr
    text = (tmp_path / "step-summary-pr.md").read_text(encoding="utf-8")
    assert f"### Against the baseline `{first.name}`" in text
    assert "pairing: 8 tasks paired" in text
    assert re.search(r"\| pass rate \| [\d.]+% \| [\d.]+% \| [-+][\d.]+ pts \[", text)
    called = "**Regression: called worse than the baseline**" in text
    assert pr.returncode == (1 if called else 0), pr.stdout + pr.stderr
    assert "[this workflow run](https://ci.example/run/1)" in text
