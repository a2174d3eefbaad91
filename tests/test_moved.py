"""``coder_eval.moved``: a module that moved is still importable from its old name, with a warning."""

from __future__ import annotations

import subprocess
import sys

import pytest

from coder_eval.moved import MOVED


def imported(code: str) -> list[str]:
    """What ``code`` prints, run in a fresh interpreter with warnings shown."""
    done = subprocess.run(
        [sys.executable, "-W", "always::DeprecationWarning", "-c", code],
        capture_output=True,
        text=True,
        check=True,
    )
    return [*done.stdout.split(), *done.stderr.splitlines()]


def test_an_old_name_is_the_new_module_itself_and_says_where_it_went() -> None:
    out = imported("import coder_eval.report as old, coder_eval.run.render as new; print(old is new)")
    assert out[0] == "True"
    assert any(
        "coder_eval.report moved to coder_eval.run.render; import it from there" in line for line in out
    )


def test_an_old_name_never_hides_a_function_of_its_package() -> None:
    code = (
        "import coder_eval.analysis as ca; from coder_eval.analysis.notebook import md_text; "
        "print(callable(ca.verdicts), callable(ca.compare), md_text is ca.md_text)"
    )
    assert imported(code)[:3] == ["True", "True", "True"]


@pytest.mark.parametrize("old", sorted(MOVED))
def test_every_row_names_a_module_that_exists_and_an_old_name_that_does_not(old: str) -> None:
    import importlib.util

    assert importlib.util.find_spec(MOVED[old]) is not None
    assert not any(old == m or old.startswith(m + ".") for m in MOVED.values())


def test_a_name_that_never_existed_is_still_an_import_error() -> None:
    with pytest.raises(ModuleNotFoundError):
        __import__("coder_eval.no_such_module")
