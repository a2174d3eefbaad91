from __future__ import annotations

import asyncio
import shutil
import socket
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from coder_eval.errors import SandboxError
from coder_eval.sandbox.bwrap import BwrapSandbox, bwrap_problem
from coder_eval.sandbox.shims import read_calls
from coder_eval.task import SandboxSpec, Shim, StarterFile, TemplateSource

from .builders import alive, run
from .conftest import MakeSandbox

PROBLEM = asyncio.run(bwrap_problem())
needs_bwrap = pytest.mark.skipif(PROBLEM is not None, reason=f"bwrap unavailable: {PROBLEM}")

CONNECT = (
    "import socket, sys; socket.create_connection(('127.0.0.1', int(sys.argv[1])), timeout=2); "
    "print('connected')"
)


@pytest.fixture
def host_dir() -> Iterator[Path]:
    """A writable host directory outside /tmp (bwrap gives commands a fresh /tmp of their own)."""
    path = Path(tempfile.mkdtemp(prefix=".coder_eval-test-", dir=Path.home()))
    yield path
    shutil.rmtree(path)


@pytest.fixture
def listener() -> Iterator[int]:
    server = socket.create_server(("127.0.0.1", 0))
    server.listen()
    yield server.getsockname()[1]
    server.close()


@needs_bwrap
def test_writes_inside_succeed_and_outside_fail(make_sandbox: MakeSandbox, host_dir: Path) -> None:
    sandbox = make_sandbox(SandboxSpec(driver="bwrap"), driver=BwrapSandbox)

    inside = run(sandbox.exec("touch made && touch $HOME/h && touch /tmp/t"))
    outside = run(sandbox.exec(["touch", str(host_dir / "escaped")]))

    assert inside.exit_code == 0 and (sandbox.root / "made").exists() and (sandbox.home / "h").exists()
    assert outside.exit_code != 0 and "Read-only file system" in outside.stderr
    assert not (host_dir / "escaped").exists()


@needs_bwrap
def test_no_network_when_disabled(make_sandbox: MakeSandbox, listener: int) -> None:
    sandbox = make_sandbox(SandboxSpec(driver="bwrap", network=False), driver=BwrapSandbox)

    result = run(sandbox.exec(["python", "-c", CONNECT, str(listener)]))

    assert result.exit_code != 0 and "connected" not in result.stdout


@needs_bwrap
def test_network_when_enabled(make_sandbox: MakeSandbox, listener: int) -> None:
    sandbox = make_sandbox(SandboxSpec(driver="bwrap"), driver=BwrapSandbox)

    assert run(sandbox.exec(["python", "-c", CONNECT, str(listener)])).stdout == "connected\n"


@needs_bwrap
def test_timeout_kills_everything_inside(make_sandbox: MakeSandbox) -> None:
    sandbox = make_sandbox(SandboxSpec(driver="bwrap"), driver=BwrapSandbox)
    started = time.monotonic()

    result = run(sandbox.exec("sleep 104.25 & sleep 104.25", timeout=1))

    assert result.timed_out and time.monotonic() - started < 3
    assert alive("sleep 104.25") == []


@needs_bwrap
def test_shims_record_inside_bwrap(make_sandbox: MakeSandbox) -> None:
    fake = StarterFile(path="mock_bin/gh", content="#!/bin/sh\necho ok\n")
    spec = SandboxSpec(
        driver="bwrap",
        template_sources=[TemplateSource(starter_files=[fake])],
        shims=[Shim(name="gh", target="mock_bin/gh")],
    )
    sandbox = make_sandbox(spec, driver=BwrapSandbox)

    assert run(sandbox.exec("gh api")).stdout == "ok\n"
    assert read_calls(sandbox.root, "gh")[0].argv == ("gh", "api")


def test_missing_bwrap_is_a_clear_error_at_create(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shutil, "which", lambda name, *args, **kwargs: None)

    with pytest.raises(SandboxError, match="'bwrap' is unavailable: bwrap is not installed"):
        run(BwrapSandbox.create(SandboxSpec(driver="bwrap"), base_dir=tmp_path))

    assert list(tmp_path.iterdir()) == []


@needs_bwrap
def test_a_python_installed_under_tmp_stays_visible(
    make_sandbox: MakeSandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A checkout (and its virtualenv) under /tmp must survive bwrap's fresh /tmp."""
    prefix = Path(tempfile.mkdtemp(prefix="coder_eval-venv-", dir="/tmp"))
    try:
        (prefix / "marker").write_text("still here\n")
        sandbox = make_sandbox(SandboxSpec(driver="bwrap"), driver=BwrapSandbox)
        hidden = run(sandbox.exec(["cat", str(prefix / "marker")]))
        monkeypatch.setattr(sys, "prefix", str(prefix))
        shown = run(sandbox.exec(["cat", str(prefix / "marker")]))
        written = run(sandbox.exec(["touch", str(prefix / "new")]))
    finally:
        shutil.rmtree(prefix)
    assert hidden.exit_code != 0  # the fresh /tmp hides what is not the running Python
    assert (shown.exit_code, shown.stdout) == (0, "still here\n")
    assert written.exit_code != 0  # visible, read-only
