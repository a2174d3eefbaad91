"""An agent kind's tool vocabulary: what its CLI calls each canonical tool, declared on the kind's spec
(``TOOLS``), so the facts about a kind live on its one row of ``AGENTS``.

The canonical vocabulary is Claude Code's (``Bash``, ``Read``, ``Write``, ``Edit``, ``Glob``, ``Grep``,
``Skill``, ``Agent``, ...); ``coder_eval.agents.tools`` maps every kind's names and input keys to it and back.

Example (a spec class)::

    TOOLS: ClassVar[Vocabulary] = Vocabulary(
        (ToolForm("bash", "Bash"), ToolForm("read", "Read", {"file_path": "filePath"})),
        absolute_paths=True,
    )
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class ToolForm:
    """One CLI's form of a canonical tool: its name, its input keys (canonical key -> its key) and the
    inputs it requires that the canonical tool has not (key -> a template over the canonical input).

    Example: ``ToolForm("exec_command", "Bash", {"command": "cmd"})``;
    ``ToolForm("replace", "Edit", required={"instruction": "Replace the text in {file_path}."})``.
    """

    name: str
    canonical: str
    keys: Mapping[str, str] = field(default_factory=dict)
    required: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Vocabulary:
    """The tools of one kind; empty for a kind that speaks the canonical names or calls no tools."""

    forms: tuple[ToolForm, ...] = ()
    absolute_paths: bool = False
    """Its file tools want absolute paths."""

    def by_canonical(self) -> dict[str, ToolForm]:
        """Canonical name -> this kind's form of it."""
        return {form.canonical: form for form in self.forms}


def same_names(*names: str) -> tuple[ToolForm, ...]:
    """Forms for tools the kind calls by their canonical names."""
    return tuple(ToolForm(name, name) for name in names)
