"""What a check saw of the agent's output, as a failure reason quotes it: bounded and escaped.

Example::

    seen_text("25\\n")                    # "'25\\\\n'"
    seen_text("x" * 1000)                 # "'xxx…xxx'… (+840 characters)"
    seen_value({"path": "/pages/13"})     # '{"path": "/pages/13"}'
    seen_of("out.txt", "25\\n")            # {"seen_in": "out.txt", "seen": "'25\\\\n'"}

A criterion that compares what the agent produced (a file, its answer, a command's output, a
recorded call) with an expectation records what it compared in its details, ``seen`` beside
``seen_in`` (where it looked), or inline in a failed check's words (``found 25``);
``coder_eval.failures`` puts it in the reason: ``patterns[0] '^3$' not found in out.txt: '25\\n'``.
The agent's text is untrusted, so it is recorded as a literal: at most :data:`SEEN_CHARS`
characters, every control, format or separator character written as an escape (``repr``), a
string's quotes around it; a reason then reads the same on a terminal, in HTML and in JSON, and
nothing in it can act on a terminal.
"""

from __future__ import annotations

import json
from typing import Any

SEEN_CHARS = 160
"""The most characters of what the agent produced that a failure quotes (the rest is counted)."""


def seen_text(text: str, limit: int = SEEN_CHARS, tail: bool = False) -> str:
    """``text`` as a bounded, escaped literal: its first ``limit`` characters (its last, with
    ``tail``), and how many were left out.

    Example: ``seen_text("a\\x1b[2Jb")`` -> ``"'a\\\\x1b[2Jb'"``; ``seen_text("", 5)`` -> ``"''"``.
    """
    if len(text) <= limit:
        return repr(text)
    left = len(text) - limit
    if tail:
        return f"(+{left} characters) …{text[-limit:]!r}"
    return f"{text[:limit]!r}… (+{left} characters)"


def seen_value(value: Any, limit: int = SEEN_CHARS) -> str:
    """A value found in the agent's output (JSON), bounded and escaped: strings as literals, the rest
    as JSON with every non-ASCII character escaped.

    Example: ``seen_value("/pages/13")`` -> ``"'/pages/13'"``; ``seen_value(None)`` -> ``"null"``.
    """
    if isinstance(value, str):
        return seen_text(value, limit)
    text = json.dumps(value, ensure_ascii=True, default=str)
    return text if len(text) <= limit else f"{text[:limit]}… (+{len(text) - limit} characters)"


def seen_of(where: str, text: str, tail: bool = False) -> dict[str, str]:
    """The ``seen`` and ``seen_in`` details of a check that read ``text`` in ``where``.

    Example: ``seen_of("the final answer", "Done.")``
    -> ``{"seen_in": "the final answer", "seen": "'Done.'"}``
    """
    return {"seen_in": where, "seen": seen_text(text, tail=tail)}


def files_named(paths: list[str]) -> str:
    """Where a check over several files looked: ``files_named(["a.txt"])`` -> ``"a.txt"``;
    three files -> ``"a.txt and 2 more files"``."""
    if not paths:
        return "no file"
    first = paths[0]
    head = first if first.isprintable() and len(first) <= 120 else seen_text(first, 80)
    return head if len(paths) == 1 else f"{head} and {len(paths) - 1} more files"
