"""A scripted tool call in the form of the CLI that asked: one script runs on every agent.

Scripts name tools the way Claude Code does (``Bash {command}``, ``Read {file_path}``, ``Edit
{file_path, old_string, new_string}``, ``Skill {skill}``, ...). When the request does not offer the
scripted name, the call is rewritten into the asking CLI's own tool (see ``coder_eval.agents.tools``):

Example::

    native_call(ToolUse(name="Bash", input={"command": "ls"}), codex_view)
    # NativeCall(name="exec_command", input={"cmd": "ls"})
    native_call(ToolUse(name="Write", input={"file_path": "a.txt", "content": "A\\n"}), codex_view)
    # NativeCall(name="apply_patch", input="*** Begin Patch\\n*** Add File: a.txt\\n+A\\n*** End Patch\\n")

Paths become absolute (against the working directory the CLI stated) for the CLIs whose vocabulary
says so, and inputs a CLI's tool requires (Gemini's ``replace`` wants an ``instruction``) are filled in
from its form's templates.
Codex has no read or skill tool, so ``Read`` and ``Skill`` become ``cat`` commands (a skill's file
is found in Codex's skill listing), and ``Write`` / ``Edit`` become ``apply_patch`` patches. An
``Edit`` whose ``old_string`` is part of a line is widened to whole lines with the file's text as
an earlier tool result in the conversation showed it (a model sees the file before patching it).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import Any

from coder_eval.agents.tools import client_of, native_form, vocabulary_of
from coder_eval.scripted.script import ToolUse
from coder_eval.scripted.skills import skill_location
from coder_eval.scripted.turns import RequestView


@dataclass(frozen=True)
class NativeCall:
    """A tool call as the CLI expects it; ``input`` is text for a freeform tool (``apply_patch``)."""

    name: str
    input: dict[str, Any] | str


def native_call(tool: ToolUse, view: RequestView) -> NativeCall:
    """``tool`` in the form of the CLI that sent ``view`` (unchanged when it offers that name)."""
    client = client_of(view.tools)
    if isinstance(tool.input, str):  # a freeform input is already some CLI's own form
        return NativeCall(tool.name, tool.input)
    if tool.name in view.tools or client is None or client == "claude-code":
        return NativeCall(tool.name, dict(tool.input))
    if client == "codex":
        special = _codex(tool, view)
        if special is not None:
            return special
    form = native_form(client, tool.name)
    if form is None:
        return NativeCall(tool.name, dict(tool.input))
    arguments = dict(tool.input)
    if vocabulary_of(client).absolute_paths and isinstance(arguments.get("file_path"), str):
        arguments["file_path"] = _absolute(arguments["file_path"], view.cwd)
    for key, template in form.required.items():
        arguments.setdefault(key, template.format_map(_Blank(arguments)))
    return NativeCall(form.name, {form.keys.get(key, key): value for key, value in arguments.items()})


class _Blank(dict[str, Any]):
    """A canonical input for ``str.format_map``: a key it lacks reads as empty."""

    def __missing__(self, key: str) -> str:
        return ""


def _absolute(path: str, cwd: str | None) -> str:
    if path.startswith("/") or cwd is None:
        return path
    return f"{cwd.rstrip('/')}/{path}"


def _codex(tool: ToolUse, view: RequestView) -> NativeCall | None:
    """Codex's forms of the tools it lacks: shell reads and ``apply_patch`` patches."""
    arguments = tool.input if isinstance(tool.input, dict) else {}
    if tool.name == "Read":
        return NativeCall("exec_command", {"cmd": f"cat {shlex.quote(str(arguments.get('file_path', '')))}"})
    if tool.name == "Skill":
        name = str(arguments.get("skill") or arguments.get("name") or "")
        path = skill_location(view.skills, name) or f"skills/{name.rsplit(':', 1)[-1]}/SKILL.md"
        return NativeCall("exec_command", {"cmd": f"cat {shlex.quote(path)}"})
    if tool.name == "Write":
        lines = str(arguments.get("content", "")).splitlines()
        body = "".join(f"+{line}\n" for line in lines)
        return NativeCall("apply_patch", _patch(f"*** Add File: {arguments.get('file_path')}\n{body}"))
    if tool.name == "Edit":
        old, new = _whole_lines(
            str(arguments.get("old_string", "")), str(arguments.get("new_string", "")), view
        )
        hunk = "".join(f"-{line}\n" for line in old) + "".join(f"+{line}\n" for line in new)
        return NativeCall("apply_patch", _patch(f"*** Update File: {arguments.get('file_path')}\n@@\n{hunk}"))
    return None


def _patch(body: str) -> str:
    return f"*** Begin Patch\n{body}*** End Patch\n"


def _whole_lines(old: str, new: str, view: RequestView) -> tuple[list[str], list[str]]:
    """``old`` and ``new`` as whole lines: a one-line fragment is completed from a line of an earlier
    tool result that contains it (line-number prefixes such as ``12\\t`` or ``12: `` dropped)."""
    if old and "\n" not in old:
        for line in view.outputs.splitlines():
            content = _strip_number(line)
            if old in content and content != old:
                before, _, after = content.partition(old)
                return [before + old + after], (before + new + after).splitlines()
    return old.splitlines(), new.splitlines()


def _strip_number(line: str) -> str:
    head, sep, rest = line.partition("\t")
    if sep and head.strip().isdigit():
        return rest
    head, sep, rest = line.partition(": ")
    return rest if sep and head.strip().isdigit() else line
