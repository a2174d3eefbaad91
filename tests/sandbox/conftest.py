from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from coder_eval.sandbox.tempdir import TempdirSandbox
from coder_eval.task import SandboxSpec

from .builders import create, run

MakeSandbox = Callable[..., TempdirSandbox]


@pytest.fixture
def make_sandbox(tmp_path: Path) -> Iterator[MakeSandbox]:
    """``make_sandbox(spec, driver=TempdirSandbox, **create_kwargs)``; all are closed after the test."""
    made: list[TempdirSandbox] = []

    def make(
        spec: SandboxSpec | None = None, driver: type[TempdirSandbox] = TempdirSandbox, **kw: Any
    ) -> TempdirSandbox:
        sandbox = create(driver, spec or SandboxSpec(), tmp_path / "sandboxes", **kw)
        made.append(sandbox)
        return sandbox

    (tmp_path / "sandboxes").mkdir()
    yield make
    for sandbox in made:
        run(sandbox.close())
