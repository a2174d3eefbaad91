"""JSON of text the harness did not write: it always encodes, and it keeps every byte.

Example::

    name = os.fsdecode(b"caf\\xe9.txt")          # 'caf\\udce9.txt': Python's surrogateescape
    line = dumps({"path": name})                # '{"path":"caf\\\\udce9.txt"}' (valid UTF-8)
    json.loads(line)["path"] == name            # True: os.fsencode gives b"caf\\xe9.txt" back
    event_line(ToolResult(id="c1", output=name))   # the trajectory line of an event

Agents, models and the files an agent writes produce text that is not valid Unicode: file names,
link targets and working directories that are not UTF-8, event streams with undecodable bytes or
JSON escapes of lone surrogates (``"\\ud800"``). coder_eval keeps such text as Python does: an
undecodable byte ``0xNN`` is the code point ``U+DCNN`` (the ``surrogateescape`` error handler), and a
lone surrogate stays itself. On disk each such code point is written as its JSON escape
(``\\udcNN``), so a line is always valid UTF-8, any JSON reader reads it, and Python's ``json``
reads back exactly the same string (``text.encode("utf-8", "surrogateescape")`` gives the original
bytes). Values JSON has no form for never stop a line from being written either: NaN and infinities
are ``null``, bytes are decoded with ``surrogateescape``, other objects are their ``str``, and
containers nested deeper than :data:`MAX_DEPTH` are cut there with a marker.

Where such text leaves for a reader that takes only valid Unicode (a model's API, an HTML page, a
terminal), :func:`visible` shows each of those code points as an escape instead: ``\\xff`` for an
undecodable byte, ``\\ud800`` for another lone surrogate.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from datetime import date, datetime, time
from typing import Any

from pydantic import BaseModel

MAX_DEPTH = 200
"""Containers nested deeper than this are replaced by :data:`TOO_DEEP` (a reader's own limits and
pydantic's are near this; no honest event nests so deep)."""
TOO_DEEP = "[coder_eval: nested deeper than 200 levels, cut here]"
MAX_INT_BITS = 10_000
"""A larger integer (past Python's int-to-string limit) is written as a string saying its size."""

_SURROGATE = re.compile("[\ud800-\udfff]")


def dumps(value: Any, *, separators: tuple[str, str] = (",", ":")) -> str:
    """``value`` as JSON text (compact unless told) that is valid UTF-8 (see the module docstring);
    never raises."""
    text = json.dumps(plain(value), ensure_ascii=False, separators=separators, allow_nan=False)
    return escape_surrogates(text)


def event_line(event: BaseModel) -> str:
    """One trajectory line for ``event``: pydantic's own JSON when it can write it, else the same
    fields through :func:`dumps` (lone surrogates escaped, deep nesting cut). Never raises."""
    try:
        return event.model_dump_json()
    except (ValueError, RecursionError):  # PydanticSerializationError is a ValueError
        return dumps(event.model_dump(mode="python"))


def escape_surrogates(text: str) -> str:
    """``text`` with each surrogate code point replaced by its JSON escape (``\\udcff``): for JSON
    text only, where surrogates can stand only inside strings."""
    return _SURROGATE.sub(lambda found: f"\\u{ord(found[0]):04x}", text)


def replace_surrogates(text: str) -> str:
    """``text`` with each surrogate code point, which stands for no character, as U+FFFD (the
    replacement character): for text that must be valid UTF-8 and is not JSON."""
    return _SURROGATE.sub("\ufffd", text)


def plain(value: Any, depth: int = 0) -> Any:
    """``value`` as JSON-ready data: dicts, lists, strings, numbers, booleans and ``None``."""
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, int):
        return value if value.bit_length() <= MAX_INT_BITS else f"[integer of {value.bit_length()} bits]"
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, bytes | bytearray):
        return bytes(value).decode("utf-8", errors="surrogateescape")
    if isinstance(value, datetime | date | time):
        return value.isoformat().replace("+00:00", "Z")
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="python")
    if depth >= MAX_DEPTH and isinstance(value, Mapping | list | tuple | set | frozenset):
        return TOO_DEEP
    if isinstance(value, Mapping):
        return {_key(key): plain(item, depth + 1) for key, item in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [plain(item, depth + 1) for item in value]
    return str(value)


def _key(key: Any) -> str:
    return key if isinstance(key, str) else str(plain(key))


def visible(text: str) -> str:
    """``text`` as valid Unicode: undecodable bytes as ``\\xNN``, other lone surrogates as ``\\uNNNN``.

    Example: ``visible(os.fsdecode(b"caf\\xe9"))`` -> ``'caf\\\\xe9'``.
    """
    return _SURROGATE.sub(_shown, text)


def visible_data(value: Any) -> Any:
    """``value`` with :func:`visible` applied to every string in it (keys too), for a JSON request."""
    if isinstance(value, str):
        return visible(value)
    if isinstance(value, Mapping):
        return {visible_data(key): visible_data(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [visible_data(item) for item in value]
    return value


def _shown(found: re.Match[str]) -> str:
    code = ord(found[0])
    return f"\\x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"\\u{code:04x}"
