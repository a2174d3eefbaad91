"""Agent text on a terminal: every character that could act on it shown as an escape, and output
that spells what a non-UTF-8 stream cannot hold."""

from __future__ import annotations

import io

import pytest

from coder_eval.terminal import ascii_fallback, inert


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("\x1b]52;c;aGk=\x07", "\\x1b]52;c;aGk=\\x07"),  # OSC 52: write the clipboard
        ("a\x1b[8mhidden\x1b[0m", "a\\x1b[8mhidden\\x1b[0m"),  # SGR 8: conceal
        ("ok\r= pass", "ok\\x0d= pass"),  # a carriage return overwriting the line
        ("x\u202eevil", "x\\u202eevil"),  # a bidirectional override
        ("a\u2028b\u2029c\x85d", "a\\u2028b\\u2029c\\x85d"),  # line separators a reader splits on
        ("\x0b\x0c\x1c\x7f", "\\x0b\\x0c\\x1c\\x7f"),
        ("zero\u200bwidth", "zero\\u200bwidth"),
        ("tag\U000e0041", "tag\\U000e0041"),  # invisible tag characters
        ("lone \udc80", "lone \\udc80"),  # a lone surrogate cannot even be encoded
    ],
)
def test_what_could_act_on_a_terminal_is_shown_as_an_escape(text: str, shown: str) -> None:
    assert inert(text) == shown


@pytest.mark.parametrize(
    "text", ["plain text", "two\nlines\tand a tab", "Héllo, Wörld! 日本語 👍", "non\u00a0breaking"]
)
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert inert(text) == text


def test_a_crlf_line_ending_is_a_newline() -> None:
    assert inert("one\r\ntwo\x1b") == "one\ntwo\\x1b"


def test_a_stream_that_cannot_hold_the_symbols_spells_them_in_ascii() -> None:
    raw = io.BytesIO()
    stream = io.TextIOWrapper(raw, encoding="ascii")
    assert ascii_fallback(stream) is True
    stream.write("  → Bash: é… ≥ 1 │ x")
    stream.flush()
    assert raw.getvalue() == b"  -> Bash: \\xe9... >= 1 | x"


def test_a_utf8_stream_is_left_as_it_is() -> None:
    stream = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    assert ascii_fallback(stream) is False
    assert stream.errors == "strict"
