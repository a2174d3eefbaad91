"""What a check quotes of the agent's output: bounded, escaped, and where it looked."""

from __future__ import annotations

from coder_eval.criteria.seen import SEEN_CHARS, files_named, seen_of, seen_text, seen_value


def test_text_is_a_literal_with_every_acting_character_escaped() -> None:
    assert seen_text("25\n") == "'25\\n'"
    hostile = seen_text("a\x1b]52;c;aGk=\x07\u202eb\u2028c")
    assert hostile == "'a\\x1b]52;c;aGk=\\x07\\u202eb\\u2028c'"
    assert hostile.isprintable()


def test_long_text_is_cut_and_counted_from_either_end() -> None:
    text = "a" * SEEN_CHARS + "TAIL"
    assert seen_text(text) == f"'{'a' * SEEN_CHARS}'… (+4 characters)"
    assert seen_text(text, 4, tail=True) == f"(+{SEEN_CHARS} characters) …'TAIL'"


def test_values_are_json_with_non_ascii_escaped_and_strings_literals() -> None:
    assert seen_value({"path": "/pages/13", "n": 2}) == '{"path": "/pages/13", "n": 2}'
    assert seen_value("é\x1b") == "'é\\x1b'"
    assert seen_value(["\u202e"]) == '["\\u202e"]'
    assert seen_value(None) == "null"
    assert seen_value(list(range(100)), 10).endswith("… (+380 characters)")


def test_where_a_check_looked() -> None:
    assert seen_of("out.txt", "x") == {"seen_in": "out.txt", "seen": "'x'"}
    assert files_named(["a.txt", "b.txt", "c.txt"]) == "a.txt and 2 more files"
    assert files_named(["bad\x1bname"]) == "'bad\\x1bname'"
    assert files_named([]) == "no file"
