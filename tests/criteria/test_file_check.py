"""file_contains / file_check / file_matches_regex, in both spellings."""

from __future__ import annotations

from pathlib import Path

from tests.criteria.builders import context, grade, load_error, passes, reason

TEXT = "import logging\nclass App:\n    print('debug')\n"


def workspace(tmp_path: Path, text: str = TEXT) -> Path:
    (tmp_path / "app.py").write_text(text)
    return tmp_path


def test_pattern_objects_must_match_or_not_with_their_own_flags(tmp_path: Path) -> None:
    ctx = context(root=workspace(tmp_path))
    spec = {
        "type": "file_check",
        "path": "app.py",
        "patterns": [
            {"pattern": "print\\(", "must_match": False},
            {"pattern": "^class app", "flags": ["IGNORECASE", "MULTILINE"]},
            {"pattern": "^class App"},  # no flags: '^' is the start of the text only
            "^class App",  # our plain string: searched multiline
        ],
    }
    verdict = grade(spec, ctx)
    assert verdict.score == 0.5
    assert verdict.details["failed"] == [
        "patterns[0] 'print\\\\(' found",
        "patterns[2] '^class App' not found",
    ]


def test_file_contains_passes_at_nine_of_ten_checks(tmp_path: Path) -> None:
    words = [f"w{i}" for i in range(10)]
    ctx = context(root=workspace(tmp_path, " ".join(words[:9])))
    assert passes({"type": "file_contains", "path": "app.py", "includes": words}, ctx)
    assert not passes(
        {"type": "file_contains", "path": "app.py", "includes": words, "pass_threshold": 1}, ctx
    )
    assert not passes({"type": "file_contains", "path": "app.py", "includes": [*words[7:], "x"]}, ctx)


def test_must_match_and_should_match_are_one_field(tmp_path: Path) -> None:
    ctx = context(root=workspace(tmp_path))
    for key in ("must_match", "should_match"):
        spec = {"type": "file_matches_regex", "path": "*.py", "pattern": "TODO", key: False}
        assert grade(spec, ctx).score == 1.0
    assert grade({"type": "file_matches_regex", "path": "*.py", "pattern": "TODO"}, ctx).score == 0.0


def test_file_matches_regex_flags_replace_the_multiline_default(tmp_path: Path) -> None:
    ctx = context(root=workspace(tmp_path))
    base = {"type": "file_matches_regex", "path": "app.py", "pattern": "^class app"}
    assert grade(base, ctx).score == 0.0
    assert grade({**base, "flags": "im"}, ctx).score == 1.0
    assert grade({**base, "flags": "i"}, ctx).score == 0.0  # no MULTILINE: '^' is the text's start


def test_a_bad_pattern_entry_fails_at_load(tmp_path: Path) -> None:
    error = load_error(
        tmp_path, "- type: file_check\n  path: a\n  patterns: [{pattern: '(', must_match: true}]"
    )
    assert "invalid regex '('" in error
    error = load_error(tmp_path, "- type: file_check\n  path: a\n  patterns: [{pattern: x, must_mach: true}]")
    assert "must_mach" in error


def test_a_failed_check_says_what_it_read_bounded_and_escaped(tmp_path: Path) -> None:
    (tmp_path / "out.txt").write_text("25\n")
    ctx = context(root=tmp_path)
    assert reason({"type": "file_check", "path": "out.txt", "patterns": ["^3$"]}, ctx) == (
        "failed: patterns[0] '^3$' not found in out.txt: '25\\n'"
    )
    both = {"type": "file_check", "path": "out.txt", "patterns": ["^3$"], "excludes": ["25"]}
    assert reason(both, ctx) == "failed: excludes '25' found; patterns[0] '^3$' not found in out.txt: '25\\n'"
    (tmp_path / "out.txt").write_text("\x1b]52;c;aGk=\x07" + "x" * 1000)
    verdict = grade({"type": "file_contains", "path": "*.txt", "includes": ["done"]}, context(root=tmp_path))
    assert verdict.details["seen_in"] == "out.txt"
    assert (
        verdict.details["seen"].startswith("'\\x1b]52;c;aGk=\\x07xxx")
        and "\x1b" not in verdict.details["seen"]
    )
    assert verdict.details["seen"].endswith("… (+852 characters)")


def test_file_matches_regex_says_what_it_read(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("hello\n")
    ctx = context(root=tmp_path)
    assert reason({"type": "file_matches_regex", "path": "a.txt", "pattern": "^bye$"}, ctx) == (
        "failed: pattern '^bye$' not found in a.txt: 'hello\\n'"
    )
    forbidden = {"type": "file_matches_regex", "path": "a.txt", "pattern": "hel+o", "must_match": False}
    assert reason(forbidden, ctx) == "failed: pattern 'hel+o' found in a.txt: 'hello\\n'"
