"""``skill_triggered``: which skill the agent engaged, recorded as a label against the expected one.

A skill counts as engaged by either of:

- a ``Skill`` tool call naming it (input ``{"skill": "pdf"}``, or ``"my-plugin:pdf"``, or
  ``{"command": "pdf"}`` as older Claude Code versions write it; OpenCode's ``skill`` and Gemini
  CLI's ``activate_skill`` with ``{"name": "pdf"}`` count as ``Skill``);
- a call of one of ``path_tools`` (Read, Bash, Grep, Glob) whose input holds a path into a skill
  folder, e.g. reading ``.claude/skills/pdf/SKILL.md`` or running ``.claude/skills/pdf/fill.py``.
  A path ``.../skills/<name>/...`` is a skill folder's when ``.../skills/<name>/SKILL.md`` exists
  in the workspace (paths are taken relative to the agent's working directory), when the path is in
  the agent's own ``~/.claude/skills/<name>/`` (where Claude Code keeps user skills), or, for a
  skill folder gone by grading time, when the path itself names ``skills/<name>/SKILL.md``. So
  ``src/skills/parser/core.py`` engages nothing unless ``src/skills/parser/SKILL.md`` exists.

``observed_label`` is the first skill engaged (``"none"`` if none was); all of them are listed in the
details. With ``skill`` set, only that skill is looked for, so the labels are ``skill`` or ``"none"``
(an ``expected_skill`` naming another skill counts as ``"none"``). ``expected_skill`` is the skill
the prompt should trigger: empty or ``none`` in any case (what ``${row.expected_skill}`` gives for a
null row value) means no skill should; null or left out means ``skill`` (so, without ``skill``, none).
The criterion passes when the labels are equal, so a dataset of prompts yields a confusion matrix
(``coder_eval.analysis.stats.classification``). Plugin prefixes (``my-plugin:``) and a leading ``/`` are
dropped from both labels, and both are lower-cased: skill names compare case-insensitively.
``skill_name`` is the original spelling of ``skill``; ``stop_early`` (or the older ``stop_when``)
arms early stop on it: the first skill engaged settles the label, so it is decided then.

Example: one prompt per row, the rows with an empty ``expected_skill`` are negatives::

    initial_prompt: "${row.prompt}"
    dataset:
      rows:
        - {id: fill-form, prompt: "Fill in form.pdf with my details", expected_skill: pdf}
        - {id: chit-chat, prompt: "What is a PDF?", expected_skill: ""}
    success_criteria:
      - type: skill_triggered
        expected_skill: "${row.expected_skill}"

Example: did the agent engage the deploy skill? ::

    - type: skill_triggered
      skill: deploy
"""

from __future__ import annotations

import re
from typing import Any, Literal, NamedTuple

from pydantic import AliasChoices, Field, model_validator

from coder_eval.agents.tools import canonical_name
from coder_eval.criteria.base import GradingContext, OriginalCriterion, Verdict, nested_strings
from coder_eval.criteria.classification_match import NONE_LABEL, as_label
from coder_eval.criteria.early_stop import Decision, StopEarlyField
from coder_eval.criteria.transcript import DETAIL_LIMIT, ToolStep, tool_steps

PATH_BREAK = re.compile(r"[\s'\"`=:;,|&<>()]+")
"""What separates the paths in a command or an input value."""

SKILL_DIR = re.compile(r"(?:^|(?<=/))skills/([A-Za-z0-9_][\w.-]*)/")
"""``skills/<name>/`` inside one path, as a whole segment followed by a slash."""

SKILL_FILE = "SKILL.md"

SKILL_INPUT_KEYS = ("skill", "command", "name")
"""Keys of a ``Skill`` call's input that name the skill, in order of preference."""


class Engagement(NamedTuple):
    """A call that engaged a skill."""

    skill: str
    step: ToolStep


def skill_name(value: str) -> str:
    """A skill reference reduced to its name: ``"/my-plugin:pdf"`` -> ``"pdf"``."""
    return value.strip().lstrip("/").rsplit(":", 1)[-1].strip()


def skill_label(value: str | None) -> str:
    """A skill reference as a label: ``"/my-plugin:PDF"`` -> ``"pdf"``; ``""`` -> ``"none"``."""
    return as_label(skill_name(value or "")).lower()


class SkillFiles:
    """Answers "is there a ``SKILL.md`` at this workspace path?" through the sandbox verbs, once each."""

    def __init__(self, ctx: GradingContext) -> None:
        self.sandbox = ctx.sandbox
        self.workdir = ctx.agent_paths.get("workdir", "").rstrip("/")
        self.home = ctx.agent_paths.get("home", "").rstrip("/")
        self._known: dict[str, bool] = {}

    def in_home_skills(self, path: str) -> bool:
        """``path`` is inside the agent's own ``~/.claude/skills/<name>/`` (user skills live only there)."""
        prefixes = ["~/.claude/skills/", *([f"{self.home}/.claude/skills/"] if self.home else [])]
        return any(path.startswith(prefix) for prefix in prefixes)

    def relative(self, path: str) -> str | None:
        """``path`` (as the agent wrote it) relative to its workspace; None when it was elsewhere."""
        if self.workdir and path.startswith(self.workdir + "/"):
            return path[len(self.workdir) + 1 :]
        if path.startswith(("/", "~")):
            return None
        return path.removeprefix("./")

    async def exists(self, relative: str) -> bool:
        if relative not in self._known:
            self._known[relative] = bool(await self.sandbox.glob(relative)) if ".." not in relative else False
        return self._known[relative]


async def skills_in_path(path: str, files: SkillFiles) -> list[str]:
    """Skills whose folder ``path`` points into: ``.claude/skills/pdf/fill.py`` -> ``["pdf"]``.

    ``.../skills/<name>/`` counts when ``.../skills/<name>/SKILL.md`` exists in the workspace (paths
    are taken relative to the agent's working directory), when it is the agent's own
    ``~/.claude/skills/<name>/`` (its HOME is not kept for grading), or when ``path`` itself names
    that ``SKILL.md``.
    """
    relative = files.relative(path)
    found_skills = []
    for found in SKILL_DIR.finditer(path):
        names_skill_file = path[found.end() :].split("/", 1)[0] == SKILL_FILE
        folder = files.relative(path[: found.end()]) if relative is not None else None
        user_skill = files.in_home_skills(path[: found.end()])
        if names_skill_file or user_skill or (folder is not None and await files.exists(folder + SKILL_FILE)):
            found_skills.append(found.group(1))
    return found_skills


class SkillTriggered(OriginalCriterion):
    needs = frozenset({"trajectory", "workspace"})
    label_field = "expected_skill"
    type: Literal["skill_triggered"] = "skill_triggered"
    skill: str | None = Field(
        default=None,
        validation_alias=AliasChoices("skill", "skill_name"),
        description="Look for this skill only (null: any skill); skill_name is the same field.",
    )
    expected_skill: str | None = Field(
        default=None,
        description="Skill that should trigger; '' or 'none': no skill should; null: the same as skill.",
    )
    skill_tool: str = Field(default="Skill", description="Name of the tool that invokes a skill.")
    path_tools: list[str] = Field(
        default_factory=lambda: ["Read", "Bash", "Grep", "Glob"],
        description="Tools whose inputs count as engaging a skill when they point into its folder.",
    )
    stop_early: StopEarlyField = Field(default=None, description="Arm early stop on this criterion.")

    @model_validator(mode="after")
    def _something_to_compare(self) -> SkillTriggered:
        if not (self.skill or "").strip() and "expected_skill" not in self.model_fields_set:
            raise ValueError("give 'skill', 'expected_skill' or both")
        return self

    def live_decision(self, verdict: Verdict) -> Decision | None:
        """Settled by the first skill engaged (the label never changes after); an episode that engaged
        none is undecided until it ends."""
        if verdict.observed_label in (None, NONE_LABEL):
            return None
        return "pass" if verdict.observed_label == verdict.expected_label else "fail"

    def _expected(self) -> str:
        expected = skill_label(self.skill if self.expected_skill is None else self.expected_skill)
        if self.skill and expected != skill_label(self.skill):
            return NONE_LABEL
        return expected

    async def evaluate(self, ctx: GradingContext) -> Verdict:
        evidence: dict[str, str] = {}
        steps = tool_steps(ctx.events)
        for engagement in await self._engagements(steps, SkillFiles(ctx)):
            evidence.setdefault(engagement.skill, engagement.step.describe())
        engaged = list(evidence)
        if self.skill:
            engaged = [name for name in engaged if name == skill_label(self.skill)]
        observed = engaged[0] if engaged else NONE_LABEL
        expected = self._expected()
        details: dict[str, Any] = {
            "observed": observed,
            "expected": expected,
            "engaged": [f"{name} ({how})" for name, how in evidence.items()][:DETAIL_LIMIT],
        }
        return Verdict(
            score=1.0 if observed == expected else 0.0,
            details=details,
            observed_label=observed,
            expected_label=expected,
        )

    async def _engagements(self, steps: list[ToolStep], files: SkillFiles) -> list[Engagement]:
        """Every call that engages a skill, in call order."""
        found = []
        path_tools = {canonical_name(tool) for tool in self.path_tools}
        for step in steps:
            if step.name == canonical_name(self.skill_tool):
                named = next((step.call.input[k] for k in SKILL_INPUT_KEYS if step.call.input.get(k)), None)
                if isinstance(named, str) and skill_name(named):
                    found.append(Engagement(skill_label(named), step))
            elif step.name in path_tools:
                for value in nested_strings(step.call.input):
                    for path in PATH_BREAK.split(value):
                        found += [Engagement(skill_label(n), step) for n in await skills_in_path(path, files)]
        return found
