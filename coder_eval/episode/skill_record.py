"""The record of an episode's skills: offered (by the harness), loaded (by the CLI's own word) and
invoked (seen in the trajectory), and one line per arm for ``coder-eval run``.

Example::

    end.skills = skill_load(stage.plugins, sink.events)
    end.skills.offered, end.skills.loaded, end.skills.invoked    # ["pdf"], ["pdf"], ["pdf"]
    arm_lines({"baseline": [end_a, ...], "with-skill": [end_b, ...]})
    # ["skills: baseline: none offered; invoked none", "skills: with-skill: offered pdf (plugin
    #   team) in 4 episodes; loaded pdf in 4/4 (claude-code init); invoked pdf in 3/4"]

Evidence of loading, by CLI (``SkillLoad``): Claude Code's ``init`` message lists each plugin
skill it loaded as ``<plugin>:<skill>`` and each plugin it loaded; OpenCode's ``debug skill``
listing, taken in the episode's sandbox with the episode's configuration just before its run (the
agent writes it to the trajectory as a ``system`` message of type ``skills``), names each skill
with its file. Codex and Gemini CLI list skills only to the model: ``loaded`` is null for them,
and ``invoked`` is what shows.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import NamedTuple

from coder_eval.agents.base import OfferedPlugin
from coder_eval.agents.tools import canonical_name
from coder_eval.trajectory import EpisodeEnd, Event, Message, SkillLoad, ToolCall

SKILL_FILE_READ = re.compile(r"(?:^|[/\s\"'`])skills/([\w.-]+)/SKILL\.md")
EVIDENCE = {"init": "claude-code init message", "skills": "opencode debug skill"}


def skill_load(offered: Sequence[OfferedPlugin], events: Iterable[Event]) -> SkillLoad:
    """The skills record of one episode (see the module docstring)."""
    events = list(events)
    names = [name for plugin in offered for name, _ in plugin.skills]
    record = SkillLoad(
        plugins=[p.name for p in offered], offered=list(dict.fromkeys(names)), invoked=invoked(events)
    )
    listing = _listing(events)
    if listing is None:
        return record
    kind, body = listing
    record.evidence = EVIDENCE[kind]
    if kind == "init":
        record.loaded, record.loaded_plugins = _claude_loaded(offered, body)
    else:
        record.loaded = _listed_files(offered, body)
        record.loaded_plugins = [p.name for p in offered if any(n in record.loaded for n, _ in p.skills)]
    return record


def _listing(events: list[Event]) -> tuple[str, Mapping[str, object]] | None:
    for event in events:
        if isinstance(event, Message) and event.role == "system" and event.content:
            block = event.content[0]
            if isinstance(block, dict) and block.get("type") in EVIDENCE:
                return str(block["type"]), block
    return None


def _claude_loaded(
    offered: Sequence[OfferedPlugin], init: Mapping[str, object]
) -> tuple[list[str], list[str]]:
    """Claude Code lists a plugin skill as ``<plugin>:<skill>``; plugins by name (and path)."""
    listed = {str(s) for s in _list(init.get("skills"))}
    plugins = _list(init.get("plugins"))
    names = {str(p.get("name")) for p in plugins if isinstance(p, dict)}
    paths = {str(p.get("path")) for p in plugins if isinstance(p, dict)}
    loaded = [n for p in offered for n, _ in p.skills if f"{p.name}:{n}" in listed]
    return list(dict.fromkeys(loaded)), [p.name for p in offered if p.name in names or p.path in paths]


def _listed_files(offered: Sequence[OfferedPlugin], body: Mapping[str, object]) -> list[str]:
    """An offered skill counts as loaded when the listing names it with a file in its folder."""
    listed = [s for s in _list(body.get("skills")) if isinstance(s, dict)]
    loaded = []
    for plugin in offered:
        for name, folder in plugin.skills:
            if any(
                s.get("name") == name and str(s.get("location", "")).startswith(folder + "/") for s in listed
            ):
                loaded.append(name)
    return list(dict.fromkeys(loaded))


def _list(value: object) -> list[object]:
    return list(value) if isinstance(value, list) else []


def invoked(events: Iterable[Event]) -> list[str]:
    """Skills the agent invoked: a skill-tool call naming one (``Skill``, ``skill``, ``activate_skill``),
    or any call whose input reads a ``skills/<name>/SKILL.md``."""
    found: list[str] = []
    for event in events:
        if not isinstance(event, ToolCall):
            continue
        if canonical_name(event.name) == "Skill":
            named = next((event.input[k] for k in ("skill", "name", "command") if event.input.get(k)), "")
            if isinstance(named, str) and named.strip():
                found.append(visible(named.strip().lstrip("/").rsplit(":", 1)[-1]))
        else:
            found += SKILL_FILE_READ.findall(" ".join(str(v) for v in event.input.values()))
    return list(dict.fromkeys(found))


def visible(name: str, limit: int = 100) -> str:
    """A name the agent wrote, safe on a terminal: control characters shown as escapes, cut to ``limit``.

    Example: ``visible("pdf\\x1b[2J")`` -> ``"pdf\\\\x1b[2J"``.
    """
    return "".join(c if c.isprintable() else f"\\x{ord(c):02x}" for c in name[:limit])


def arm_lines(ends: Mapping[str, Sequence[EpisodeEnd]]) -> list[str]:
    """One line per arm naming what its episodes were offered, loaded and invoked; none when no
    episode of any arm was offered a skill (a run without skills prints nothing)."""
    records = {arm: [e.skills for e in episodes if e.skills is not None] for arm, episodes in ends.items()}
    if not any(r.offered or r.plugins for rs in records.values() for r in rs):
        return []
    return [_arm_line(arm, rs) for arm, rs in records.items() if rs]


def _arm_line(arm: str, records: list[SkillLoad]) -> str:
    n = len(records)
    offered = sorted({s for r in records for s in r.offered})
    plugins = sorted({p for r in records for p in r.plugins})
    if not offered and not plugins:
        return f"skills: {arm}: none offered; invoked {_counted(records, 'invoked', n)}"
    label = "plugin" if len(plugins) == 1 else "plugins"
    line = f"skills: {arm}: offered {', '.join(offered) or 'no skill'} ({label} {', '.join(plugins)})"
    line += f" in {n} episode{'s' if n != 1 else ''}"
    reported = [r for r in records if r.loaded is not None]
    if reported:
        evidence = ", ".join(sorted({r.evidence for r in reported if r.evidence}))
        line += f"; loaded {_counted(reported, 'loaded', len(reported))} ({evidence})"
    else:
        line += "; loaded: not reported by this agent's CLI"
    return line + f"; invoked {_counted(records, 'invoked', n)}"


def _counted(records: list[SkillLoad], field: str, n: int) -> str:
    counts = Counter(s for r in records for s in (getattr(r, field) or []))
    if not counts:
        return "none"
    return ", ".join(f"{name} in {count}/{n}" for name, count in sorted(counts.items()))


class NeverLoaded(NamedTuple):
    """A skill an arm was offered that its CLI reported loading in none of the episodes that report."""

    arm: str
    skill: str
    offered_in: int
    reported_in: int
    evidence: str


def never_loaded(ends: Mapping[str, Sequence[EpisodeEnd]]) -> list[NeverLoaded]:
    """Per arm, every offered skill the CLI never listed as loaded (only where the CLI reports loading:
    an agent that lists nothing says nothing either way). A renamed or broken skill looks like this:
    offered in every episode, loaded in none, so the arm measured the agent without it.

    Example: ``never_loaded({"with_skill": ends})`` -> ``[NeverLoaded("with_skill", "pdf", 24, 24, ...)]``
    """
    found = []
    for arm, episodes in ends.items():
        records = [e.skills for e in episodes if e.skills is not None]
        reported = [r for r in records if r.loaded is not None]
        evidence = ", ".join(sorted({r.evidence for r in reported if r.evidence}))
        for skill in sorted({s for r in records for s in r.offered}):
            offered = [r for r in reported if skill in r.offered]
            if offered and not any(skill in (r.loaded or []) for r in offered):
                count = sum(skill in r.offered for r in records)
                found.append(NeverLoaded(arm, skill, count, len(offered), evidence))
    return found
