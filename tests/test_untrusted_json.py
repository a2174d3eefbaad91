"""JSON of untrusted text: always written, valid UTF-8, read back unchanged; shown escaped."""

from __future__ import annotations

import json
import math
import os
from datetime import UTC, datetime

from coder_eval.untrusted_json import dumps, visible, visible_data


def test_undecodable_bytes_and_lone_surrogates_are_escaped_and_read_back() -> None:
    name = os.fsdecode(b"caf\xe9")
    value = {"path": name, "half": "\ud83d", "ok": "café ✓"}

    line = dumps(value)

    assert line.encode("utf-8").decode("utf-8") == line  # valid UTF-8
    assert "caf\\udce9" in line and "\\ud83d" in line and "café ✓" in line  # only surrogates escaped
    assert json.loads(line) == value and os.fsencode(json.loads(line)["path"]) == b"caf\xe9"


def test_values_json_has_no_form_for_are_written_not_raised() -> None:
    value = {"nan": math.nan, "inf": -math.inf, "raw": b"\xff", "big": 10**5000, 3: {1, 2}}
    value["when"] = datetime(2026, 1, 2, tzinfo=UTC)

    read = json.loads(dumps(value))

    assert read["nan"] is None and read["inf"] is None and read["raw"] == os.fsdecode(b"\xff")
    assert read["big"] == "[integer of 16610 bits]" and sorted(read["3"]) == [1, 2]
    assert read["when"] == "2026-01-02T00:00:00Z"


def test_visible_shows_what_is_not_unicode_as_escapes() -> None:
    text = "caf" + os.fsdecode(b"\xe9") + " \ud800"

    assert visible(text) == "caf\\xe9 \\ud800"
    assert visible_data({"k" + os.fsdecode(b"\xff"): [text, 1]}) == {"k\\xff": ["caf\\xe9 \\ud800", 1]}
    visible(text).encode("utf-8")  # a model's API, a page, a terminal take it
