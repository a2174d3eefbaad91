"""Plugin paths as suites write them, the skills each arm offers, and skill arms that offer nothing new."""

from __future__ import annotations

from pathlib import Path

import pytest

from coder_eval.errors import ExperimentError, TaskError
from coder_eval.experiment import CommandLine
from coder_eval.experiment.checks import plan_warnings
from coder_eval.experiment.skill_arms import offered_skills, skill_names
from tests.experiment.builders import resolved, two_tasks, write_experiment

AB = """
experiment_id: skills
defaults: {{agent: {{kind: claude-code}}}}
variants:
  - variant_id: baseline
  - variant_id: with-skill
    agent: {{plugins: ["{path}"]}}
"""


@pytest.fixture(autouse=True)
def _a_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """These arms name a real model; its key warning is another test's subject."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "a-key")


def skill(folder: Path, name: str, body: str = "Use the CLI.") -> Path:
    (folder / name).mkdir(parents=True, exist_ok=True)
    (folder / name / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {name} help\n---\n{body}\n")
    return folder


def arms(tmp_path: Path, path: str) -> dict[str, list[str]]:
    experiment = write_experiment(tmp_path / "experiments", AB.format(path=path))
    resolution = resolved([two_tasks(tmp_path)], experiment)
    assert plan_warnings(resolution) == []
    return {p.variant_id: skill_names(p.task) for p in resolution.plans if p.task.task_id == "a"}


def test_a_bare_skills_root_next_to_the_suite_relative_to_the_experiment(tmp_path: Path) -> None:
    skill(skill(tmp_path / "skills", "release-notes"), "changelog")

    assert arms(tmp_path, "../skills") == {
        "baseline": [],
        "with-skill": ["changelog", "release-notes"],
    }


def test_a_plugin_root_through_a_variable_braced_or_not_and_absolute(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    skill(tmp_path / "team" / "skills", "deploy")
    monkeypatch.setenv("TEAM_PLUGINS", str(tmp_path))

    for path in ("$TEAM_PLUGINS/team", "${TEAM_PLUGINS}/team", str(tmp_path / "team")):
        assert arms(tmp_path, path)["with-skill"] == ["deploy"]


def test_a_manifest_names_its_own_skills_folder(tmp_path: Path) -> None:
    plugin = tmp_path / "team"
    (plugin / ".claude-plugin").mkdir(parents=True)
    (plugin / ".claude-plugin" / "plugin.json").write_text('{"name": "team", "skills": "tools"}')
    skill(plugin / "tools", "lint")

    assert arms(tmp_path, "../team")["with-skill"] == ["lint"]


def test_an_unset_variable_is_refused_by_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_SUCH_PLUGINS", raising=False)

    with pytest.raises(TaskError, match="the environment variable NO_SUCH_PLUGINS is not set"):
        arms(tmp_path, "$NO_SUCH_PLUGINS")


def test_a_missing_absolute_folder_is_refused(tmp_path: Path) -> None:
    with pytest.raises(TaskError, match=r"agent.plugins\[0\]: '/nowhere/skills': no such folder"):
        arms(tmp_path, "/nowhere/skills")


def test_a_skill_arm_offering_no_skill_is_an_error_at_plan_time(tmp_path: Path) -> None:
    (tmp_path / "empty" / "docs").mkdir(parents=True)

    with pytest.raises(ExperimentError) as caught:
        arms(tmp_path, "../empty")

    assert "variant 'with-skill' is meant to differ from the baseline 'baseline' only by its skills" in str(
        caught.value
    )
    assert "offers the same skills as the baseline (none)" in str(caught.value)


def test_a_skill_arm_offering_the_baselines_skills_is_an_error(tmp_path: Path) -> None:
    skill(tmp_path / "skills", "deploy")
    experiment = AB.format(path="skills").replace(
        "defaults: {agent: {kind: claude-code}}", "defaults: {agent: {kind: claude-code, plugins: [skills]}}"
    )
    with pytest.raises(ExperimentError, match=r"offers the same skills as the baseline \(deploy\)"):
        resolved([two_tasks(tmp_path)], write_experiment(tmp_path, experiment))


def test_two_versions_of_one_skill_differ(tmp_path: Path) -> None:
    skill(tmp_path / "v1", "deploy", "Deploy with --dry-run first.")
    skill(tmp_path / "v2", "deploy", "Deploy.")
    experiment = """
    experiment_id: versions
    defaults: {agent: {kind: claude-code}}
    variants:
      - {variant_id: v1, agent: {plugins: [v1]}}
      - {variant_id: v2, agent: {plugins: [v2]}}
    """
    resolution = resolved([two_tasks(tmp_path)], write_experiment(tmp_path, experiment))

    first, second = (offered_skills(p.task).skills for p in resolution.plans[:2])
    assert {name for name, _ in first} == {name for name, _ in second} == {"deploy"}
    assert first != second


def test_an_arm_that_also_changes_the_prompt_is_no_skill_arm(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    experiment = AB.format(path="empty") + "    prompt_mutations: {suffix: ' Use your skills.'}\n"

    found = plan_warnings(resolved([two_tasks(tmp_path)], write_experiment(tmp_path, experiment)))

    assert any("agent.plugins entry" in w and "holds no skill" in w for w in found)


def test_our_workspace_spelling_stages_the_templates_own_folder(tmp_path: Path) -> None:
    skill(tmp_path / "plugin" / "skills", "deploy")
    experiment = """
    experiment_id: workspace
    defaults: {agent: {kind: claude-code}}
    variants:
      - variant_id: baseline
      - variant_id: with-skill
        template_sources: [{template_dir: plugin, target: .plugins/p}]
        agent: {plugins: [.plugins/p]}
    """
    resolution = resolved([two_tasks(tmp_path)], write_experiment(tmp_path, experiment))

    task = next(p.task for p in resolution.plans if p.variant_id == "with-skill")
    assert [p.path for p in task.agent.plugins] == [str((tmp_path / "plugin").resolve())]  # type: ignore[attr-defined]
    assert skill_names(task) == ["deploy"]


def test_an_agent_that_loads_no_skills_drops_them_with_a_warning_not_an_error(tmp_path: Path) -> None:
    skill(tmp_path / "skills", "deploy")
    experiment = write_experiment(tmp_path / "experiments", AB.format(path="../skills"))

    resolution = resolved([two_tasks(tmp_path)], experiment, CommandLine(agent="oracle"))

    assert any("agent.plugins" in w and "is left out" in w for w in plan_warnings(resolution))
