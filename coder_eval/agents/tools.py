"""The tool vocabulary: what each agent CLI calls the same tools, in one table.

Trajectories record every tool call under the name the agent used (``exec_command``, ``bash``,
``run_shell_command``); graders and scripts speak one vocabulary, Claude Code's (``Bash``, ``Read``,
``Write``, ``Edit``, ``Glob``, ``Grep``, ``Skill``, ``Agent``, ...). This module maps between them.

Example::

    canonical_name("run_shell_command")                 # "Bash"
    canonical_input("exec_command", {"cmd": "ls"})      # {"command": "ls"}
    native_form("opencode", "Read")                     # ToolForm("read", "Read", {"file_path": "filePath"})
    client_of({"exec_command", "apply_patch"})          # "codex"

Each kind declares its own vocabulary on its spec (``TOOLS``, see ``coder_eval.agents.vocabulary``);
this module gathers them. Codex has no read, write or skill tool: it reads files (skills included)
with shell commands and changes files with ``apply_patch``, which counts as ``Edit``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from coder_eval.agents import AGENTS
from coder_eval.agents.vocabulary import ToolForm, Vocabulary

__all__ = [
    "SIGNATURES",
    "VOCABULARIES",
    "ToolForm",
    "canonical_input",
    "canonical_name",
    "client_of",
    "native_form",
    "vocabulary_of",
]

VOCABULARIES: dict[str, dict[str, ToolForm]] = {
    kind: row.spec.TOOLS.by_canonical() for kind, row in AGENTS.items() if row.spec.TOOLS.forms
}
"""Agent kind -> canonical tool name -> that CLI's form of it (from each kind's ``TOOLS``)."""

SIGNATURES: dict[str, str] = {
    forms["Bash"].name: kind for kind, forms in VOCABULARIES.items() if "Bash" in forms
}
"""The shell tool each CLI offers, which tells the CLIs apart in a request."""

_BY_NAME: dict[str, list[ToolForm]] = {}
for _vocabulary in VOCABULARIES.values():
    for _form in _vocabulary.values():
        _BY_NAME.setdefault(_form.name, []).append(_form)


def canonical_name(name: str) -> str:
    """The canonical name of any CLI's tool; an unknown name is its own canonical name.

    Example: ``canonical_name("activate_skill")`` -> ``"Skill"``; ``canonical_name("mcp__x__y")``
    -> ``"mcp__x__y"``.
    """
    forms = _BY_NAME.get(name)
    return forms[0].canonical if forms else name


def canonical_input(name: str, tool_input: Mapping[str, Any]) -> dict[str, Any]:
    """``tool_input`` of the CLI tool ``name`` with its keys renamed to the canonical ones.

    Example: ``canonical_input("read", {"filePath": "/w/a.py"})`` -> ``{"file_path": "/w/a.py"}``.
    """
    back = {native: canonical for form in _BY_NAME.get(name, []) for canonical, native in form.keys.items()}
    return {back.get(key, key): value for key, value in tool_input.items()}


def native_form(client: str, canonical: str) -> ToolForm | None:
    """The form of ``canonical`` in the CLI ``client``, or None when it has no such tool.

    Example: ``native_form("gemini", "Bash").name`` -> ``"run_shell_command"``.
    """
    return VOCABULARIES.get(client, {}).get(canonical)


def client_of(offered: Iterable[str]) -> str | None:
    """Which CLI sent a request, from the tools it offers (None when none of them is known).

    Example: ``client_of(["read", "bash", "skill"])`` -> ``"opencode"``.
    """
    names = set(offered)
    return next((client for tool, client in SIGNATURES.items() if tool in names), None)


def vocabulary_of(client: str) -> Vocabulary:
    """The vocabulary of the kind ``client`` (empty for an unknown kind).

    Example: ``vocabulary_of("gemini").absolute_paths`` -> ``True``.
    """
    row = AGENTS.get(client)
    return row.spec.TOOLS if row is not None else Vocabulary()
