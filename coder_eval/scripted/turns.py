"""Which scripted turn answers a request: request kinds, conditions, turn cursor, seeded choice.

Example::

    view = RequestView.of(body)
    cursor = Cursor()
    selection = select(script.turns, cursor, view, seed=7, final_text="Done.")
    selection.turn, selection.branch     # (0, "blocks")

A request's turn is found from its conversation, not from the order requests arrive in: the
number of assistant messages already in ``messages`` says how far the conversation is, and the
cursor remembers which script turn answered each step, so retries, auxiliary requests and
sub-agents never shift the main conversation's turns.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from coder_eval.agents.tools import canonical_input, canonical_name
from coder_eval.scripted.script import Block, ErrorSpec, Script, Turn, When
from coder_eval.scripted.skills import listed_skills, loads_skill, offers_skill

RequestKind = Literal["main", "subagent", "auxiliary"]
SUBAGENT_MARKER = "cc_is_subagent=true"
"""Claude Code puts this in the billing-header system block of every sub-agent request."""


@dataclass(frozen=True)
class RequestView:
    """The facts of a request that selection looks at, whatever the wire dialect.

    Example: ``RequestView.of({"messages": [{"role": "user", "content": "hi"}]}).text == "hi"``

    ``tools`` are the names offered (each CLI's own); ``calls`` the tool calls already in the
    conversation as (canonical name, input as JSON); ``skills`` the skills the request lists (see
    ``skills.py``); ``cwd`` the working directory the CLI told the model, when it did; ``outputs``
    every tool result of the conversation.
    """

    tools: frozenset[str]
    text: str
    last_tool_results: str
    assistant_count: int
    conversation: str
    subagent: bool = False
    calls: tuple[tuple[str, str], ...] = ()
    skills: Mapping[str, str | None] = field(default_factory=dict)
    cwd: str | None = None
    model: str | None = None
    outputs: str = ""

    @classmethod
    def of(cls, body: dict[str, Any]) -> RequestView:
        """Read an Anthropic Messages request body (already parsed JSON)."""
        messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
        system = _text(body.get("system"))
        last = messages[-1] if messages and messages[-1].get("role") == "user" else {}
        first = messages[0] if messages else {}
        text = "\n".join([system, *(_text(m.get("content")) for m in messages)])
        return cls(
            tools=frozenset(t.get("name", "") for t in body.get("tools") or [] if isinstance(t, dict)),
            text=text,
            last_tool_results=_text(last.get("content"), only_tool_results=True),
            assistant_count=sum(1 for m in messages if m.get("role") == "assistant"),
            conversation=conversation_key(_text(first.get("content"))),
            subagent=SUBAGENT_MARKER in system,
            calls=tuple(
                call(block.get("name", ""), block.get("input"))
                for m in messages
                if m.get("role") == "assistant" and isinstance(m.get("content"), list)
                for block in m["content"]
                if isinstance(block, dict) and block.get("type") == "tool_use"
            ),
            skills=listed_skills(text),
            cwd=working_directory(system),
            model=str(body["model"]) if body.get("model") else None,
            outputs="\n".join(_text(m.get("content"), only_tool_results=True) for m in messages),
        )

    def kind(self, script: Script) -> RequestKind:
        """``subagent`` (marked by Claude Code), ``auxiliary`` (no tools offered) or ``main``."""
        if self.subagent:
            return "subagent"
        if not self.tools and not script.answer_without_tools:
            return "auxiliary"
        return "main"


def conversation_key(first: str) -> str:
    """A short stable key for a conversation, from the text that opens it."""
    return hashlib.sha1(first.encode()).hexdigest()[:16]


def call(name: str, tool_input: Any) -> tuple[str, str]:
    """A tool call as :attr:`RequestView.calls` holds it. Example: ``call("bash", {"command": "ls"})``
    -> ``("Bash", '{"command": "ls"}')``."""
    arguments = tool_input if isinstance(tool_input, dict) else {"input": tool_input}
    return canonical_name(name), json.dumps(canonical_input(name, arguments))


WORKDIR = re.compile(r"(?:Working directory|Primary working directory): (/\S*)|<cwd>(/[^<]*)</cwd>")


def working_directory(text: str) -> str | None:
    """The working directory a CLI states in its prompt (OpenCode, Claude Code, Codex), if any."""
    found = WORKDIR.search(text)
    return next((group for group in found.groups() if group), None) if found else None


def _text(content: Any, only_tool_results: bool = False) -> str:
    """The plain text of a system prompt or message content (strings, blocks, tool results)."""
    if isinstance(content, str):
        return "" if only_tool_results else content
    if not isinstance(content, list):
        return ""
    parts: list[str] = []
    for block in content:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "tool_result":
            parts.append(_text(block.get("content")))
        elif only_tool_results:
            continue
        elif kind == "text":
            parts.append(str(block.get("text", "")))
        elif kind == "tool_use":
            parts.append(f"{block.get('name', '')} {json.dumps(block.get('input', {}))}")
    return "\n".join(parts)


def holds(when: When, view: RequestView) -> bool:
    """Whether every field of ``when`` holds for the request.

    Example: ``holds(When(tool_offered="Skill"), view)`` is True when ``Skill`` is in ``tools``.
    """
    wanted = [when.tool_offered] if isinstance(when.tool_offered, str) else when.tool_offered or []
    checks = [
        all(name in view.tools for name in wanted),
        when.skill_offered is None or offers_skill(view.skills, view.tools, when.skill_offered),
        when.skill_loaded is None or loads_skill(view.calls, when.skill_loaded),
        when.request_contains is None or when.request_contains in view.text,
        when.request_matches is None or re.search(when.request_matches, view.text) is not None,
        when.last_tool_result_contains is None or when.last_tool_result_contains in view.last_tool_results,
        when.last_tool_result_matches is None
        or re.search(when.last_tool_result_matches, view.last_tool_results) is not None,
    ]
    return all(checks)


@dataclass
class Cursor:
    """Where one conversation is in its turn list.

    ``answered`` maps an assistant count to the script turn that answered it;
    ``attempts`` counts the errors served per script turn (for ``error.times``).
    """

    answered: dict[int, int] = field(default_factory=dict)
    attempts: dict[int, int] = field(default_factory=dict)

    def start(self, assistant_count: int) -> int:
        """The first script turn to try: one past the turn that answered the latest earlier step."""
        earlier = [step for step in self.answered if step < assistant_count]
        return self.answered[max(earlier)] + 1 if earlier else 0

    def fail_attempt(self, turn: int, times: int | None) -> bool:
        """Count an attempt at an error turn; True while the error should still be served."""
        served = self.attempts.get(turn, 0)
        if times is not None and served >= times:
            return False
        self.attempts[turn] = served + 1
        return True


@dataclass(frozen=True)
class Selection:
    """The answer chosen for one request.

    Example: ``Selection(turn=2, branch="choose[1]", blocks=(Block(text="B"),), error=None)``.
    ``turn`` is the script index (None for the final or auxiliary answer); ``branch`` is one of
    ``blocks``, ``otherwise``, ``choose[i]``, ``error``, ``final``, ``auxiliary``.
    """

    turn: int | None
    branch: str
    blocks: tuple[Block, ...]
    error: ErrorSpec | None = None


def select(
    turns: list[Turn], cursor: Cursor, view: RequestView, seed: int, final_text: str, stream: str = "main"
) -> Selection:
    """The turn that answers ``view``, walking from the cursor past skipped and spent turns."""
    position = cursor.start(view.assistant_count)
    while position < len(turns):
        picked = _pick(turns[position], position, cursor, view, _rng(seed, stream, position))
        if picked is not None:
            if picked.error is None:
                cursor.answered[view.assistant_count] = position
            return picked
        position += 1
    return Selection(turn=None, branch="final", blocks=(Block(text=final_text),))


def _pick(
    turn: Turn, position: int, cursor: Cursor, view: RequestView, rng: random.Random
) -> Selection | None:
    if turn.when is not None and not holds(turn.when, view):
        if turn.otherwise is None:
            return None
        return Selection(turn=position, branch="otherwise", blocks=tuple(turn.otherwise))
    if turn.error is not None and cursor.fail_attempt(position, turn.error.times):
        return Selection(turn=position, branch="error", blocks=(), error=turn.error)
    if turn.blocks is not None:
        return Selection(turn=position, branch="blocks", blocks=tuple(turn.blocks))
    if turn.choose is not None:
        index = rng.choices(range(len(turn.choose)), weights=[c.weight for c in turn.choose])[0]
        return Selection(turn=position, branch=f"choose[{index}]", blocks=tuple(turn.choose[index].blocks))
    return None


def _rng(seed: int, stream: str, position: int) -> random.Random:
    """A generator fixed by (seed, stream, turn index): the same choice however often it is asked."""
    return random.Random(f"{seed}:{stream}:{position}")
