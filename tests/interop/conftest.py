"""A Python with the ``harbor`` package (see ``harbor_venv``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from .harbor_venv import HARBOR, harbor_venv


@pytest.fixture(scope="session")
def harbor_python(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The Python of a venv with harbor installed, made once and kept in pytest's cache."""
    cache = getattr(request.config, "cache", None)
    return harbor_venv(cache.mkdir(f"{HARBOR}-venv") if cache else tmp_path_factory.mktemp("harbor-venv"))
