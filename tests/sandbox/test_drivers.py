from __future__ import annotations

from pathlib import Path

import pytest

from coder_eval.errors import SandboxError
from coder_eval.sandbox import DRIVERS, TempdirSandbox, make_sandbox
from coder_eval.task import SandboxSpec

from .builders import run


def test_default_driver_is_tempdir(tmp_path: Path) -> None:
    sandbox = run(make_sandbox(SandboxSpec(), base_dir=tmp_path))

    assert type(sandbox) is TempdirSandbox and sandbox.root.is_relative_to(tmp_path)
    run(sandbox.close())


def test_docker_is_not_available() -> None:
    with pytest.raises(SandboxError, match=r"'docker' is not available.*tempdir, bwrap"):
        run(make_sandbox(SandboxSpec(driver="docker")))


def test_unknown_driver_lists_the_valid_ones() -> None:
    with pytest.raises(SandboxError, match="valid: bwrap, tempdir"):
        run(make_sandbox(SandboxSpec().model_copy(update={"driver": "tempdri"})))


def test_drivers_table() -> None:
    assert set(DRIVERS) == {"tempdir", "bwrap"}
