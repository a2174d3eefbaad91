"""Regex flags as a task file writes them: names, letters, a list, or a mapping of booleans.

Example::

    - type: file_matches_regex
      path: app.py
      pattern: "^class app"
      flags: [IGNORECASE, MULTILINE]      # or "im", or "re.I|re.M", or {ignorecase: true, multiline: true}
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Annotated, Any

from pydantic import BeforeValidator

FLAG_NAMES = {
    "I": "IGNORECASE",
    "M": "MULTILINE",
    "S": "DOTALL",
    "X": "VERBOSE",
    "A": "ASCII",
}
"""Regex flags by letter; a ``flags`` value may use the letters or the full names."""


def parse_flags(value: Any) -> list[str]:
    """Regex flags as written in a task file -> their canonical names.

    Example: ``parse_flags("re.I|MULTILINE")`` -> ``["IGNORECASE", "MULTILINE"]``; also a list
    (``[ignorecase, s]``), letters (``"im"``) or a mapping of booleans (``{ignorecase: true}``).
    """
    if value is None:
        return []
    if isinstance(value, dict):
        return parse_flags([name for name, on in value.items() if on])
    words = re.split(r"[|,\s]+", value) if isinstance(value, str) else value
    if not isinstance(words, list):
        raise ValueError(f"flags: give names (IGNORECASE, MULTILINE ...) or letters (ims), got {value!r}")
    names: list[str] = []
    for word in (str(w).strip().upper().removeprefix("RE.") for w in words):
        if not word:
            continue
        if word in FLAG_NAMES.values():
            names.append(word)
        elif all(letter in FLAG_NAMES for letter in word):
            names.extend(FLAG_NAMES[letter] for letter in word)
        else:
            known = ", ".join(FLAG_NAMES.values())
            raise ValueError(f"unknown regex flag {word!r}; use {known} (or the letters i, m, s, x, a)")
    return list(dict.fromkeys(names))


Flags = Annotated[list[str], BeforeValidator(parse_flags)]
"""Regex flags, stored as canonical names (``["IGNORECASE"]``)."""


def flag_value(names: Sequence[str]) -> re.RegexFlag:
    """``["IGNORECASE", "MULTILINE"]`` -> ``re.IGNORECASE | re.MULTILINE``."""
    flags = re.RegexFlag(0)
    for name in names:
        flags |= re.RegexFlag[name]
    return flags
