"""The CI recipe of docs/ci.md, run here as its workflow file writes it: every ``run:`` step through
bash with the env it sets, against the scripted model (no API key), on a push to main and then on a
pull request that renamed the skill; only the checkout, Python's set-up, the artifact upload and
download and the PR comment are local equivalents (tests/workflow.py says which)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
import yaml

from coder_eval.analysis import load_runs
from coder_eval.manifest import read_manifest
from coder_eval.trajectory import read_trajectory
from tests.helpers import REPO, scripted_list_price
from tests.wheelhouse import wheelhouse
from tests.workflow import Context, Event, Job, Machine

WORKFLOW = REPO / "docs" / "ci" / "coder-eval.yml"
JOB = Job(WORKFLOW, "eval")
SKILL = Path("tasks/demo/plugins/site-tools/skills/sitectl/SKILL.md")


def step(name: str) -> dict:
    return next(s for s in JOB.steps if s.get("id") == name or s.get("name") == name)


def test_the_workflow_keeps_the_history_the_baseline_is_read_from() -> None:
    kept = [s for s in JOB.steps if s.get("uses", "").startswith("actions/upload-artifact")]
    assert any(s["with"]["name"] == "coder-eval-history" and s["with"]["path"] == "history/" for s in kept)
    assert JOB.spec["env"]["CODER_EVAL_STORE"].startswith("history/")
    assert "--name coder-eval-history --dir history" in step("restore")["run"]
    assert '--max-cost-usd "$MAX_COST_USD"' in step("eval")["run"]
    assert "--link-base" in step("summary")["run"]  # links in a PR comment must be absolute
    assert 'pip install ".[analysis]"' in step("install")["run"]  # this repository's checkout


def test_expressions_read_as_github_reads_them() -> None:
    context = Context(Event(7, "pull_request", "refs/pull/3/merge", head_ref="pr", number=3))
    assert context.substitute("${{ github.head_ref || github.ref_name }}") == "pr"
    assert context.substitute("x${{ secrets.ANTHROPIC_API_KEY }}y") == "xy"
    assert context.condition({"if": "always() && github.event_name == 'pull_request'"})
    assert not context.condition({"if": "github.ref == 'refs/heads/main' && steps.eval.outcome != 'skipped'"})
    with pytest.raises(ValueError, match="hashFiles"):
        context.evaluate("hashFiles('x')")


@pytest.mark.slow
@pytest.mark.timeout(3600)
def test_the_recipe_as_written_gates_a_pull_request_against_main(tmp_path: Path) -> None:
    machine, wheels = Machine(tmp_path / "github"), tmp_path / "wheels"
    wheelhouse(["setuptools>=77"], wheels)  # the build backend pip installs the checkout with

    main = JOB.run(Event(1, "push", "refs/heads/main"), workspace(tmp_path / "main"), machine, wheels)
    ran = outcomes(main)
    assert ran["eval"] == "success", main.steps["eval"].stdout + main.steps["eval"].stderr
    assert "no baseline: latest-on-main names no completed run" in main.steps["eval"].stderr
    assert (
        ran["comment on the pull request"] == "skipped"
        and ran["keep the history (main only; the next baseline)"] == "success"
    )
    first = (tmp_path / "main" / "runs" / "latest").resolve()
    fits_its_budget(first, float(JOB.spec["env"]["MAX_COST_USD"]))

    pr_workspace = workspace(tmp_path / "pr")
    event = Event(
        2, "pull_request", "refs/pull/5/merge", head_ref="rename-skill", number=5, change=rename_skill
    )
    pr = JOB.run(event, pr_workspace, machine, wheels)
    ran = outcomes(pr)
    failed = {s.name: s.stdout[-3000:] + s.stderr[-3000:] for s in pr.ran if s.outcome == "failure"}
    assert ran["restore"] == ran["summary"] == ran["comment on the pull request"] == "success", failed
    assert ran["keep the history (main only; the next baseline)"] == "skipped"

    text = (tmp_path / "pr-step-summary.md").read_text(encoding="utf-8")
    assert f"### Against the baseline `{first.name}`" in text
    assert "pairing: 28 tasks paired" in text
    assert re.search(r"\| pass rate \| [\d.]+% \| [\d.]+% \| [-+][\d.]+ pts \[", text)
    assert "**Scripted model**: every episode ran against coder_eval's scripted model server" in text
    gates = read_manifest((pr_workspace / "runs" / "latest").resolve()).gates or []
    baseline_gate = next(g for g in gates if g.gate == "baseline")
    called = "**Regression: called worse than the baseline**" in text
    assert (baseline_gate.verdict == "fail") == called
    failed_gates = [g for g in gates if g.verdict == "fail"]
    assert pr.steps["eval"].exit_code == (1 if failed_gates else 0), pr.steps["eval"].stderr
    assert all(f"`{g.variant_id}` {g.gate}: {g.metric}" in text for g in failed_gates)  # why the job failed
    links = re.findall(r"\]\(([^)]+)\)", text)
    assert links and all(link.startswith("https://github.example/acme/site/") for link in links), links
    assert "artifacts/coder-eval-reports#" in text  # each report named in the reports artifact
    assert "\n\nHTML reports: the coder-eval-reports artifact of [this workflow run]" in text
    comment = (machine.comments / "5" / "000.md").read_text(encoding="utf-8")
    assert comment == (pr_workspace / "summary.md").read_text(encoding="utf-8") and comment in text


def rename_skill(checkout: Path) -> None:
    """The pull request: the skill renamed, so the agent no longer loads it by the name it looks for."""
    skill = checkout / SKILL
    skill.write_text(skill.read_text(encoding="utf-8").replace("name: sitectl", "name: site-helper", 1))


def workspace(folder: Path) -> Path:
    """An empty folder for one job's checkout (a fresh runner each time)."""
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    return folder


def outcomes(context: Context) -> dict[str, str]:
    return {s.name: s.outcome for s in context.ran}


def fits_its_budget(run: Path, budget: float) -> None:
    """Every planned episode ran, at $0 (a scripted model has no price), and the list price of the
    tokens they used (the CLI's own figure, kept in each episode's note) stays within three quarters
    of the budget: the gate experiment is sized to its cap, with room for a real model's longer
    answers."""
    manifest = read_manifest(run)
    repeats = yaml.safe_load((REPO / "docs" / "ci" / "skill-gate.yaml").read_text())["defaults"]["repeats"]
    assert manifest.status == "completed" and len(manifest.episodes) == 28 * repeats
    ends = [read_trajectory(p).end for p in (run / "episodes").glob("*.jsonl")]
    assert len(ends) == len(manifest.episodes) and all(e is not None and e.cost_usd == 0 for e in ends)
    priced = [scripted_list_price(e.notes) or 0.0 for e in ends if e is not None]
    assert 0 < sum(priced) <= 0.75 * budget, (sum(priced), budget)
    assert load_runs(run).episodes["cost_usd"].sum() == 0
