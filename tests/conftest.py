"""Fixtures shared across the test packages."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import coder_eval.scripted
from coder_eval.scripted import ScriptedServer
from tests.docker_engine import _docker_when_marked, docker_engine, stop_started_engine  # noqa: F401


def pytest_sessionfinish(session: pytest.Session) -> None:
    """The run's end (in the xdist controller, or the only process): stop a daemon the tests started."""
    if not hasattr(session.config, "workerinput"):
        stop_started_engine()


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
