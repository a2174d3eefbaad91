"""The tool vocabulary: what each agent CLI calls the same tools, in one table.

Trajectories record every tool call under the name the agent used (``exec_command``, ``bash``,
``run_shell_command``); graders and scripts speak one vocabulary, Claude Code's (``Bash``, ``Read``,
``Write``, ``Edit``, ``Glob``, ``Grep``, ``Skill``, ``Agent``, ...). This module maps between them.

Example::

    canonical_name("run_shell_command")                 # "Bash"
    canonical_input("exec_command", {"cmd": "ls"})      # {"command": "ls"}
    native_form("opencode", "Read")                     # ToolForm("read", "Read", {"file_path": "filePath"})
    client_of({"exec_command", "apply_patch"})          # "codex"

Codex has no read, write or skill tool: it reads files (skills included) with shell commands and
changes files with ``apply_patch``, which counts as ``Edit``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ToolForm:
    """One CLI's form of a canonical tool: its name and its input keys (canonical key -> its key).

    Example: ``ToolForm("exec_command", "Bash", {"command": "cmd"})``.
    """

    name: str
    canonical: str
    keys: Mapping[str, str] = field(default_factory=dict)


def _forms(*forms: ToolForm) -> dict[str, ToolForm]:
    return {form.canonical: form for form in forms}


_FILE = {"file_path": "filePath"}
VOCABULARIES: dict[str, dict[str, ToolForm]] = {
    "claude-code": _forms(
        *(
            ToolForm(name, name)
            for name in ("Bash", "Read", "Write", "Edit", "Glob", "Grep", "Skill", "Agent", "WebFetch")
        ),
        ToolForm("Task", "Agent"),
        ToolForm("TodoWrite", "TodoWrite"),
    ),
    "opencode": _forms(
        ToolForm("bash", "Bash"),
        ToolForm("read", "Read", _FILE),
        ToolForm("write", "Write", _FILE),
        ToolForm(
            "edit",
            "Edit",
            {**_FILE, "old_string": "oldString", "new_string": "newString", "replace_all": "replaceAll"},
        ),
        ToolForm("glob", "Glob"),
        ToolForm("grep", "Grep"),
        ToolForm("skill", "Skill", {"skill": "name"}),
        ToolForm("task", "Agent"),
        ToolForm("webfetch", "WebFetch"),
        ToolForm("todowrite", "TodoWrite"),
    ),
    "gemini": _forms(
        ToolForm("run_shell_command", "Bash"),
        ToolForm("read_file", "Read"),
        ToolForm("write_file", "Write"),
        ToolForm("replace", "Edit", {"replace_all": "allow_multiple"}),
        ToolForm("glob", "Glob", {"path": "dir_path"}),
        ToolForm("grep_search", "Grep", {"path": "dir_path", "glob": "include_pattern"}),
        ToolForm("list_directory", "LS", {"path": "dir_path"}),
        ToolForm("activate_skill", "Skill", {"skill": "name"}),
        ToolForm("invoke_agent", "Agent", {"subagent_type": "agent_name"}),
        ToolForm("web_fetch", "WebFetch"),
        ToolForm("write_todos", "TodoWrite"),
    ),
    "codex": _forms(
        ToolForm("exec_command", "Bash", {"command": "cmd"}),
        ToolForm("apply_patch", "Edit"),
        ToolForm("update_plan", "TodoWrite"),
    ),
}
"""Agent kind -> canonical tool name -> that CLI's form of it."""

SIGNATURES: dict[str, str] = {
    "Bash": "claude-code",
    "bash": "opencode",
    "run_shell_command": "gemini",
    "exec_command": "codex",
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
