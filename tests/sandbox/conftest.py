from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from coder_eval.sandbox import DRIVERS, HostSandbox, Provision
from coder_eval.sandbox.spec import SandboxSpecBase

from .builders import run

MakeSandbox = Callable[..., HostSandbox]


@pytest.fixture
def make_sandbox() -> Iterator[MakeSandbox]:
    """``make_sandbox(driver="tempdir", provision=None, **spec_fields)``; all are closed after the test.

    The provision defaults to one seeded from the spec's template sources, shims and mock dirs. The
    sandboxes sit in a short folder of the system's temporary directory, as a run's do: below pytest's
    ``tmp_path`` of a test under pytest-xdist, a harness socket's path would pass the 107 bytes a
    Unix socket's name may have.
    """
    made: list[HostSandbox] = []
    base_dir = Path(tempfile.mkdtemp(prefix="ce-test-"))

    def make(driver: str = "tempdir", provision: Provision | None = None, **fields: Any) -> HostSandbox:
        spec_class, sandbox_class = DRIVERS[driver]
        assert sandbox_class is not None
        spec: SandboxSpecBase = spec_class(**fields)
        provision = provision or Provision(
            sources=tuple(spec.template_sources),
            path_dirs=tuple(spec.mock_path_dirs),
            recorders=tuple(spec.recorders),
            env=spec.env,
            network=spec.network,
            limits=spec.limits,
        )
        sandbox = run(sandbox_class.create(spec, provision, base_dir=base_dir))
        made.append(sandbox)
        return sandbox

    yield make
    for sandbox in made:
        run(sandbox.close())
    shutil.rmtree(base_dir, ignore_errors=True)


@pytest.fixture
def canary() -> Iterator[Path]:
    """A secret in the host's home (where the harness's user keeps credentials)."""
    path = Path(tempfile.mkdtemp(prefix=".coder_eval-canary-", dir=Path.home())) / "secret.txt"
    path.write_text("canary-7f3e\n")
    yield path
    shutil.rmtree(path.parent)
