"""A venv with the ``harbor`` package (PyPI), which needs Python >= 3.12 while the tests run on 3.11.

It is made from pyenv's Python 3.12 (or 3.13) once and kept in pytest's cache folder
(``.pytest_cache/d/``) until that is cleared; the ``harbor_python`` fixture (``conftest.py``) gives
its interpreter, and tests run harbor's code in it as a subprocess. ``scripts/install.sh --packages``
makes it: with uv from the index pip is configured with, compiled as it is installed, else with pip.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

HARBOR = "harbor==0.25.0"
INSTALL = Path(__file__).resolve().parents[2] / "scripts" / "install.sh"
PYTHONS = ("3.12", "3.13")


def pyenv_python() -> Path | None:
    """pyenv's newest Python 3.12 (else 3.13), which harbor needs."""
    versions = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    for minor in PYTHONS:
        found = sorted(versions.glob(f"{minor}.*/bin/python{minor}"))
        if found:
            return found[-1]
    return None


def run(*args: str | Path, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(a) for a in args], capture_output=True, text=True, timeout=timeout, check=False
    )


def harbor_venv(venv: Path) -> Path:
    """The Python of a venv at ``venv`` with harbor installed (made unless it already is); skips the
    test when no Python >= 3.12 is found or pip cannot install harbor."""
    base = pyenv_python()
    if base is None:
        pytest.skip(f"{HARBOR} needs Python >= 3.12 and no {' or '.join(PYTHONS)} is under ~/.pyenv/versions")
    python, stamp = venv / "bin" / "python", venv / "installed"
    if stamp.is_file() and python.is_file():
        return python
    installed = subprocess.run(  # uv when it can be had (seconds), else pip (about 45 s here)
        ["bash", str(INSTALL), str(venv), "--packages", HARBOR],
        env={**os.environ, "PYTHON": str(base)},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if installed.returncode != 0 or not python.is_file():
        pytest.skip(f"could not install {HARBOR} into a {base} venv: {installed.stderr.strip()[-500:]}")
    stamp.write_text(HARBOR, encoding="utf-8")
    return python
