"""``coder_eval.version``: one version, read by the package, the CLI and the wheel's metadata."""

from __future__ import annotations

import re
import tomllib

import coder_eval
from coder_eval.version import __version__
from tests.helpers import REPO


def test_the_package_and_the_wheel_read_the_one_version() -> None:
    assert re.fullmatch(r"\d+\.\d+\.\d+", __version__)
    assert coder_eval.__version__ == __version__
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "coder_eval.version.__version__"}
