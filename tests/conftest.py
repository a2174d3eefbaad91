"""Fixtures shared across the test packages."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import coder_eval.scripted
from coder_eval.scripted import ScriptedServer
from tests.docker_engine import _docker_when_marked, docker_engine  # noqa: F401 (fixtures)


@pytest.fixture
def servers(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[ScriptedServer]]:
    """Every scripted server started during the test (the agent's, a judge's, a simulator's), to read
    the requests each received."""
    made: list[ScriptedServer] = []

    class Recording(ScriptedServer):
        def start(self) -> ScriptedServer:
            made.append(self)
            return super().start()

    monkeypatch.setattr(coder_eval.scripted, "ScriptedServer", Recording)
    yield made
