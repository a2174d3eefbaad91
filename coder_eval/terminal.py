"""Text on a terminal: what the agent wrote made inert, and output that survives any locale.

Example::

    inert("done\\x1b]52;c;aGk=\\x07")       # 'done\\\\x1b]52;c;aGk=\\\\x07': shown, never obeyed
    ascii_fallback(sys.stdout)             # under LC_ALL=C: '→' prints as '->', 'é' as '\\\\xe9'

Every terminal surface (``coder-eval show``, ``--follow``, the end-of-run summary) passes agent text
through :func:`inert` before printing it, so an escape sequence (an OSC 52 clipboard write, a
"conceal" or cursor-movement code), a carriage return, a bidirectional override or a line separator
in a message, a tool output or a file name is printed as a visible escape instead of acting on the
terminal. Newlines and tabs are kept: where a line of agent text starts is the transcript's business
(it indents every such line behind a gutter, see ``coder_eval.transcript``).
"""

from __future__ import annotations

import codecs
import re
import unicodedata
from typing import TextIO

KEPT = "\n\t"
"""Control characters left as they are: line breaks and tabs cannot act on a terminal."""

_SUSPECT = re.compile(r"[^\n\t\x20-\x7e]")
"""Everything but printable ASCII, newline and tab: the only characters :func:`inert` looks at."""

GLYPHS = {
    "→": "->",
    "←": "<-",
    "⇢": "=>",
    "…": "...",
    "≥": ">=",
    "≤": "<=",
    "–": "-",
    "—": "-",
    "·": ".",
    "×": "x",
    "│": "|",
    "━": "-",
    "─": "-",
}
"""The harness's own symbols and their ASCII spelling, for a terminal that cannot show them."""

ERROR_HANDLER = "coder_eval.ascii"
"""The codec error handler :func:`ascii_fallback` installs on a stream."""


def inert(text: str) -> str:
    """``text`` with every character that could act on a terminal written as a visible escape.

    Escaped: control characters but newline and tab (ESC, BEL, a lone carriage return, DEL, C1
    controls), format characters (bidirectional overrides, zero-width characters), line and
    paragraph separators, private-use and unassigned code points and lone surrogates; a CRLF line
    ending is a newline. ``inert("a\\x1b[8mb")`` -> ``'a\\\\x1b[8mb'``.
    """
    if not _SUSPECT.search(text):
        return text
    return _SUSPECT.sub(_visible, text.replace("\r\n", "\n"))


def _visible(match: re.Match[str]) -> str:
    char = match.group()
    return char if char.isprintable() or unicodedata.category(char) == "Zs" else _escape(char)


def _escape(char: str) -> str:
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def _ascii_spelling(error: UnicodeError) -> tuple[str, int]:
    if not isinstance(error, UnicodeEncodeError):
        raise error
    text = error.object[error.start : error.end]
    return "".join(GLYPHS.get(char) or _escape(char) for char in text), error.end


codecs.register_error(ERROR_HANDLER, _ascii_spelling)


def ascii_fallback(stream: TextIO) -> bool:
    """Make ``stream`` spell what its encoding cannot hold (the harness's symbols in ASCII, anything
    else as a ``\\\\x..`` escape) instead of raising; True when it had to (a non-UTF-8 locale)."""
    encoding = getattr(stream, "encoding", None) or "utf-8"
    try:
        "".join(GLYPHS).encode(encoding)
    except (UnicodeEncodeError, LookupError):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors=ERROR_HANDLER)
            return True
    return False
