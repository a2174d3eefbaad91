"""Skills as each CLI lists them in a request, and the calls that load one.

Example::

    listed_skills(request_text)     # {"site-tools:sitectl": None, "pdf": "/h/.gemini/skills/pdf/SKILL.md"}
    offers_skill(skills, tools, "sitectl")
    loads_skill(calls, "sitectl")        # a Skill call named it, or a call read skills/sitectl/SKILL.md

The listings, as the CLIs write them:

- Claude Code: ``- <plugin>:<name>: <description>`` lines (the ``Skill`` tool offered);
- OpenCode and Gemini CLI: ``<available_skills><skill><name>..</name>...<location>..</location>``
  (their ``skill`` / ``activate_skill`` tool offered);
- Codex: ``- <name>: <description> (file: r0/<name>/SKILL.md)`` under ``### Available skills``, with
  a ``### Skill roots`` table that expands ``r0``; Codex reads a skill's file with a shell command.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence

CLAUDE_LINE = re.compile(r"^- ((?:[\w.-]+:)?[\w.-]+): ", re.MULTILINE)
XML_SKILL = re.compile(
    r"<skill>\s*<name>([^<]+)</name>.*?(?:<location>([^<]*)</location>)?\s*</skill>", re.DOTALL
)
CODEX_SECTION = re.compile(r"### Available skills\n(.*?)(?:\n#|\n</skills_instructions>|\Z)", re.DOTALL)
CODEX_LINE = re.compile(r"^- ([\w.-]+): .*\(file: ([^)\s]+)\)\s*$", re.MULTILINE)
CODEX_ROOT = re.compile(r"^- `(\w+)` = `([^`]+)`", re.MULTILINE)
SKILL_TOOLS = frozenset({"Skill", "skill", "activate_skill"})
"""Tools that load a skill by name (Claude Code, OpenCode, Gemini CLI)."""


def listed_skills(text: str) -> dict[str, str | None]:
    """Every skill the request lists, by name as listed (``plugin:name`` for Claude Code plugins),
    with the path of its ``SKILL.md`` when the listing gives one."""
    skills: dict[str, str | None] = {name: None for name in CLAUDE_LINE.findall(text)}
    for name, location in XML_SKILL.findall(text):
        skills[name.strip()] = location.strip() if location and location.startswith("/") else None
    section = CODEX_SECTION.search(text)
    if section is not None:
        roots = dict(CODEX_ROOT.findall(text))
        for name, path in CODEX_LINE.findall(section.group(1)):
            root, _, rest = path.partition("/")
            skills[name] = f"{roots[root]}/{rest}" if root in roots else path
    return skills


def _bare(name: str) -> str:
    return name.rsplit(":", 1)[-1]


def offers_skill(skills: Mapping[str, str | None], tools: Iterable[str], skill: str) -> bool:
    """``skill`` (``name``, or ``plugin:name`` to require that plugin) is listed, and the CLI can
    load it: through its skill tool, or (Codex, no such tool) by reading its listed file."""
    listed = skill in skills if ":" in skill else any(_bare(name) == skill for name in skills)
    if not listed:
        return False
    named = [path for name, path in skills.items() if _bare(name) == _bare(skill)]
    return bool(SKILL_TOOLS & set(tools)) or any(path for path in named)


def skill_location(skills: Mapping[str, str | None], skill: str) -> str | None:
    """The listed path of ``skill``'s ``SKILL.md``, if any."""
    return next((path for name, path in skills.items() if path and _bare(name) == _bare(skill)), None)


def loads_skill(calls: Sequence[tuple[str, str]], skill: str) -> bool:
    """Whether one of ``calls`` (canonical name, input as JSON) loaded ``skill``: a ``Skill`` call
    naming it, or any call whose input holds a path to ``skills/<skill>/SKILL.md``."""
    wanted = _bare(skill).lower()
    path = re.compile(rf"(?:^|[/\s\"'`])skills/{re.escape(_bare(skill))}/SKILL\.md", re.IGNORECASE)
    for name, payload in calls:
        if name == "Skill":
            tool_input = json.loads(payload)
            named = next((tool_input[k] for k in ("skill", "name", "command") if tool_input.get(k)), "")
            if isinstance(named, str) and _bare(named.strip().lstrip("/")).lower() == wanted:
                return True
        elif path.search(payload):
            return True
    return False
