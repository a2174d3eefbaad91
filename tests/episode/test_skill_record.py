"""An episode's skills record (offered, loaded by the CLI's own word, invoked) and the run's arm lines."""

from __future__ import annotations

from coder_eval.agents.base import OfferedPlugin
from coder_eval.episode.skill_record import arm_lines, invoked, skill_load
from coder_eval.trajectory import EpisodeEnd, Message, SkillLoad, ToolCall

TEAM = OfferedPlugin(
    "team",
    "/s/plugins/team",
    ("/s/plugins/team/skills",),
    (("pdf", "/s/plugins/team/skills/pdf"), ("docx", "/s/plugins/team/skills/docx")),
    "/suite/team",
)


def init(skills: list[str], plugins: list[dict[str, str]]) -> Message:
    return Message(role="system", content=[{"type": "init", "skills": skills, "plugins": plugins}])


def test_claude_codes_init_message_says_which_plugin_skills_loaded() -> None:
    events = [
        init(["dataviz", "team:pdf", "pdf"], [{"name": "team", "path": "/s/plugins/team", "source": "x"}]),
        ToolCall(id="1", name="Skill", input={"skill": "team:pdf"}),
    ]

    record = skill_load([TEAM], events)

    assert record == SkillLoad(
        plugins=["team"],
        offered=["pdf", "docx"],
        loaded_plugins=["team"],
        loaded=["pdf"],
        invoked=["pdf"],
        evidence="claude-code init message",
    )


def test_a_built_in_skill_of_the_same_name_is_not_the_offered_one() -> None:
    record = skill_load([TEAM], [init(["pdf", "docx"], [])])

    assert (record.loaded, record.loaded_plugins) == ([], [])


def test_opencodes_listing_counts_a_skill_only_with_its_file_in_the_staged_folder() -> None:
    listing = Message(
        role="system",
        content=[
            {
                "type": "skills",
                "skills": [
                    {"name": "pdf", "location": "/s/plugins/team/skills/pdf/SKILL.md"},
                    {"name": "docx", "location": "/w/.opencode/skill/docx/SKILL.md"},
                ],
            }
        ],
    )

    record = skill_load([TEAM], [listing])

    assert (record.loaded, record.evidence) == (["pdf"], "opencode debug skill")


def test_without_a_listing_nothing_is_claimed_loaded() -> None:
    record = skill_load(
        [TEAM], [ToolCall(id="1", name="exec_command", input={"cmd": "cat skills/pdf/SKILL.md"})]
    )

    assert (record.loaded, record.loaded_plugins, record.invoked) == (None, None, ["pdf"])


def test_invoked_skills_from_every_cli_and_names_safe_on_a_terminal() -> None:
    calls = [
        ToolCall(id="1", name="skill", input={"name": "pdf"}),
        ToolCall(id="2", name="activate_skill", input={"name": "/team:docx"}),
        ToolCall(id="3", name="Read", input={"file_path": "/h/.claude/skills/lint/SKILL.md"}),
        ToolCall(id="4", name="Skill", input={"skill": "evil\x1b[2J"}),
        ToolCall(id="5", name="Read", input={"file_path": "src/skills/parser/core.py"}),
    ]

    assert invoked(calls) == ["pdf", "docx", "lint", "evil\\x1b[2J"]


def end(skills: SkillLoad | None) -> EpisodeEnd:
    return EpisodeEnd(outcome="pass", status="completed", skills=skills)


def test_one_line_per_arm_names_what_was_offered_loaded_and_invoked() -> None:
    baseline = SkillLoad(invoked=[], evidence="claude-code init message", loaded=[], loaded_plugins=[])
    with_skill = SkillLoad(
        plugins=["team"], offered=["pdf"], loaded=["pdf"], loaded_plugins=["team"], invoked=["pdf"],
        evidence="claude-code init message",
    )  # fmt: skip
    silent = with_skill.model_copy(update={"loaded": [], "invoked": []})

    lines = arm_lines({"baseline": [end(baseline)] * 2, "with-skill": [end(with_skill), end(silent)]})

    assert lines == [
        "skills: baseline: none offered; invoked none",
        "skills: with-skill: offered pdf (plugin team) in 2 episodes; loaded pdf in 1/2 "
        "(claude-code init message); invoked pdf in 1/2",
    ]


def test_a_cli_that_lists_nothing_says_so_and_a_run_without_skills_prints_nothing() -> None:
    codex = SkillLoad(plugins=["team"], offered=["pdf"], invoked=["pdf"])

    assert arm_lines({"a": [end(codex)]}) == [
        "skills: a: offered pdf (plugin team) in 1 episode; loaded: not reported by this agent's CLI; "
        "invoked pdf in 1/1"
    ]
    assert arm_lines({"a": [end(SkillLoad()), end(None)]}) == []
