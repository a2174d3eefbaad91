"""A suite written in the original coder_eval format (tests/compat/): it loads unchanged, its graders
pass with the oracle and fail with doing nothing, its suite gates hold, and its experiment resolves."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest
import yaml

from coder_eval.criteria import CRITERIA
from coder_eval.experiment import default_experiment, load_experiment, resolve
from coder_eval.run.validate import validate_tasks
from coder_eval.task import discover, load_tasks
from tests.helpers import REPO, coder_eval

HERE = Path(__file__).parent
SUITE = HERE / "suite"
ORIGINAL_KINDS = {
    "file_exists",
    "file_contains",
    "file_check",
    "file_matches_regex",
    "json_check",
    "run_command",
    "pytest",
    "reference_comparison",
    "command_executed",
    "command_not_executed",
    "cli_called",
    "commands_efficiency",
    "classification_match",
    "skill_triggered",
    "llm_judge",
    "agent_judge",
}


def written_kinds() -> set[str]:
    return {
        c["type"]
        for path in discover([SUITE])
        for c in yaml.safe_load(path.read_text(encoding="utf-8"))["success_criteria"]
    }


def test_every_file_loads_and_every_original_kind_is_used() -> None:
    tasks = load_tasks([SUITE])
    assert len({t.source_path for t in tasks}) == len(discover([SUITE])) == 10
    assert written_kinds() == ORIGINAL_KINDS and set(CRITERIA) >= ORIGINAL_KINDS
    assert all(t.description for t in tasks)


def test_datasets_sample_per_stratum_with_the_original_defaults() -> None:
    rows = [t.dataset_row for t in load_tasks([SUITE / "skill_triggers.yaml"])]
    strata = sorted(str(r["expected_skill"]) for r in rows if r)
    assert strata == ["", "", "docx", "docx", "pdf", "pdf"]  # stratify_field defaults to expected_skill
    classify = load_tasks([SUITE / "classify.yaml"])
    assert [t.task_id for t in classify] == [f"compat-classify.t{i}" for i in range(1, 5)]  # split test
    assert classify[0].suite_gates["label"]["recall.billing"] == 0.5


@pytest.mark.slow
def test_oracle_passes_and_doing_nothing_fails_every_deterministic_task() -> None:
    tasks = [t for t in load_tasks([SUITE]) if not t.skip]
    report = asyncio.run(validate_tasks(tasks))
    assert [row.task_id for row in report if not row.ok] == []
    negatives = {row.task_id for row in report if "negative row" in row.verdict}
    assert negatives == {"compat-skill-triggers.chat", "compat-skill-triggers.weather"}


@pytest.mark.slow
@pytest.mark.parametrize(("agent", "code"), [("oracle", 0), ("none", 1)])
def test_suite_gates_hold_for_the_oracle_and_fail_for_doing_nothing(
    tmp_path: Path, agent: str, code: int
) -> None:
    shutil.copytree(SUITE, tmp_path / "suite")
    result = coder_eval("run", "suite", "--agent", agent, "--no-report", cwd=tmp_path)
    assert result.returncode == code, result.stdout + result.stderr
    gates = json.loads((tmp_path / "runs" / "latest" / "run.json").read_text())["gates"]
    metrics = {(g["gate"], g["metric"], g["label"]): g["verdict"] for g in gates}
    assert metrics[("compat-classify:label", "recall", "billing")] == ("pass" if code == 0 else "fail")
    assert metrics[("compat-skill-triggers:skill", "precision", "pdf")] == ("pass" if code == 0 else "fail")
    assert metrics[("compat-classify:label", "completion_rate", None)] == "pass"


def test_the_original_experiment_resolves_with_its_prompt_mutations() -> None:
    experiment = load_experiment(HERE / "experiments" / "original.yaml")
    resolution = resolve(experiment, [])
    plans = {(p.task.task_id, p.variant_id): p for p in resolution.plans}
    plain, rephrased = plans["compat-judge", "as-written"], plans["compat-judge", "rephrased"]
    assert plain.task.prompt.startswith("Work in the current folder. Find which port")
    assert rephrased.task.sandbox.driver == "tempdir"
    record = json.loads(rephrased.provenance["prompt_mutations.rephrase[0]"])
    assert record["before"].startswith("Stay in the current folder.") and record["before"].endswith("say so.")
    assert rephrased.task.prompt == record["prompt"] != record["before"]
    again = resolve(load_experiment(HERE / "experiments" / "original.yaml"), []).plans
    assert [p.task.prompt for p in again] == [p.task.prompt for p in resolution.plans]  # seeded


def test_the_quarantined_task_runs_only_when_included() -> None:
    default = default_experiment()
    assert "compat-agent-judge" not in resolve(default, [SUITE]).task_ids
    from coder_eval.experiment import Selection

    assert (
        "compat-agent-judge" in resolve(default, [SUITE], selection=Selection(include_skipped=True)).task_ids
    )


@pytest.mark.slow
def test_the_compat_examples_validate(tmp_path: Path) -> None:
    result = coder_eval("validate", str(REPO / "tasks" / "compat"), cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
