"""skill_triggered: which skill the agent engaged, as observed/expected labels."""

from __future__ import annotations

from pathlib import Path

import pytest

from coder_eval.criteria import CriterionSpec
from coder_eval.criteria.skill_triggered import SkillTriggered
from coder_eval.task import load_tasks
from coder_eval.trajectory import Event
from tests.criteria.builders import Transcript, context, evaluate, grade, load_error
from tests.helpers import write_task

PDF_BY_TOOL = Transcript().tool("Skill", {"skill": "docs-plugin:pdf"}).bash("python fill.py").events
PDF_THEN_DEPLOY = (
    Transcript()
    .tool("Glob", {"pattern": "**/skills/*/SKILL.md"})
    .read("/home/u/.claude/skills/pdf/SKILL.md")
    .bash("cat .claude/skills/deploy/SKILL.md")
    .events
)


def test_skill_tool_call_matches_the_expected_skill() -> None:
    verdict = grade({"type": "skill_triggered", "expected_skill": "pdf"}, context(PDF_BY_TOOL))
    assert verdict.score == 1.0
    assert (verdict.observed_label, verdict.expected_label) == ("pdf", "pdf")


def test_first_engaged_skill_is_observed_and_all_are_listed() -> None:
    verdict = grade({"type": "skill_triggered", "expected_skill": "deploy"}, context(PDF_THEN_DEPLOY))
    assert verdict.score == 0.0
    assert verdict.observed_label == "pdf"
    assert verdict.details["engaged"] == [
        'pdf (#1 Read: {"file_path": "/home/u/.claude/skills/pdf/SKILL.md"})',
        "deploy (#2 Bash: cat .claude/skills/deploy/SKILL.md)",
    ]


def skill_folder(root: Path, relative: str = ".claude/skills/pdf") -> Path:
    """A skill folder (with its SKILL.md and a script) under ``root``."""
    folder = root / relative
    (folder / "scripts").mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: pdf\n---\n", encoding="utf-8")
    (folder / "scripts" / "fill.py").write_text("", encoding="utf-8")
    return folder


def test_paths_through_folders_that_are_not_skills_engage_nothing(tmp_path: Path) -> None:
    for relative in ("src/skills/parser", "game/skills/fireball", "docs/skills"):
        (tmp_path / relative).mkdir(parents=True)
    (tmp_path / "docs/skills/README.md").write_text("", encoding="utf-8")
    events = (
        Transcript()
        .read("src/skills/parser/core.py")
        .bash("grep -rn TODO game/skills/fireball/")
        .tool("Grep", {"pattern": "TODO", "path": "docs/skills/README.md"})
        .events
    )

    verdict = grade({"type": "skill_triggered", "expected_skill": ""}, context(events, root=tmp_path))

    assert (verdict.score, verdict.observed_label, verdict.details["engaged"]) == (1.0, "none", [])


def test_any_path_into_a_real_skill_folder_engages_it(tmp_path: Path) -> None:
    folder = skill_folder(tmp_path)
    spec = {"type": "skill_triggered", "skill": "pdf"}
    relative = Transcript().bash("cd /tmp && python .claude/skills/pdf/scripts/fill.py form.pdf").events
    absolute = Transcript().read(str(folder / "scripts" / "fill.py")).events

    assert grade(spec, context(relative, root=tmp_path)).observed_label == "pdf"
    assert grade(spec, context(absolute, root=tmp_path)).observed_label == "pdf"
    assert grade(spec, context(absolute, root=tmp_path, agent_paths={})).observed_label == "none"


def test_a_path_into_the_agents_own_claude_skills_folder_engages_the_skill(tmp_path: Path) -> None:
    home = "/sandbox/home"
    spec = {"type": "skill_triggered", "skill": "pdf"}
    paths = {"workdir": str(tmp_path), "home": home}

    def observed(events: list[Event]) -> str | None:
        return grade(spec, context(events, tmp_path, agent_paths=paths)).observed_label

    assert observed(Transcript().bash("python ~/.claude/skills/pdf/scripts/fill.py").events) == "pdf"
    assert observed(Transcript().read(f"{home}/.claude/skills/pdf/scripts/fill.py").events) == "pdf"
    assert observed(Transcript().read(f"{home}/notes/skills/pdf/fill.py").events) == "none"


def test_skill_names_compare_case_insensitively() -> None:
    events = Transcript().tool("Skill", {"skill": "PDF"}).events

    verdict = grade({"type": "skill_triggered", "skill": "pdf"}, context(events))

    assert (verdict.score, verdict.observed_label, verdict.expected_label) == (1.0, "pdf", "pdf")
    assert grade({"type": "skill_triggered", "expected_skill": "Pdf"}, context(events)).score == 1.0


@pytest.mark.parametrize("negative", ["", None, "none", "None"])
def test_negative_rows_pass_when_no_skill_is_engaged(negative: str | None) -> None:
    spec = {"type": "skill_triggered", "expected_skill": negative}
    verdict = grade(spec, context(Transcript().bash("ls").events))
    assert verdict.score == 1.0
    assert (verdict.observed_label, verdict.expected_label) == ("none", "none")
    assert grade(spec, context(PDF_BY_TOOL)).observed_label == "pdf"


def test_skill_alone_is_a_binary_check_for_that_skill() -> None:
    spec = {"type": "skill_triggered", "skill": "deploy"}
    verdict = grade(spec, context(PDF_THEN_DEPLOY))
    assert verdict.score == 1.0
    assert (verdict.observed_label, verdict.expected_label) == ("deploy", "deploy")
    missed = grade(spec, context(PDF_BY_TOOL))
    assert (missed.score, missed.observed_label) == (0.0, "none")


def test_skill_with_another_expected_skill_expects_none() -> None:
    verdict = grade(
        {"type": "skill_triggered", "skill": "deploy", "expected_skill": "pdf"}, context(PDF_BY_TOOL)
    )
    assert (verdict.score, verdict.observed_label, verdict.expected_label) == (1.0, "none", "none")


def test_dataset_rows_fan_out_to_positive_and_negative_labels(tmp_path: Path) -> None:
    path = write_task(
        tmp_path,
        """
        task_id: route
        initial_prompt: "${row.prompt}"
        dataset:
          rows:
            - {id: fill, prompt: fill the form, expected_skill: pdf}
            - {id: chat, prompt: what is a pdf, expected_skill: ""}
            - {id: null-row, prompt: hi, expected_skill: null}
        success_criteria:
          - type: skill_triggered
            expected_skill: "${row.expected_skill}"
        """,
    )
    specs: list[CriterionSpec] = [task.success_criteria[0] for task in load_tasks([path])]
    assert all(isinstance(spec, SkillTriggered) for spec in specs)
    labels = [evaluate(spec, context(PDF_BY_TOOL)).expected_label for spec in specs]
    assert labels == ["pdf", "none", "none"]


def test_bad_input_fails_at_load(tmp_path: Path) -> None:
    assert "give 'skill', 'expected_skill' or both" in load_error(tmp_path, "- type: skill_triggered")
    assert "success_criteria[0].expected: unknown field (did you mean 'expected_skill'?)" in load_error(
        tmp_path, "- type: skill_triggered\n  expected: pdf"
    )


def test_skill_name_is_the_original_spelling_of_skill() -> None:
    events = Transcript().tool("Skill", {"skill": "pdf"}).events
    verdict = grade(
        {"type": "skill_triggered", "skill_name": "pdf", "expected_skill": "pdf"}, context(events)
    )
    assert (verdict.observed_label, verdict.score) == ("pdf", 1.0)
