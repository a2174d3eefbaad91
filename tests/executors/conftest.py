"""The in-process CLI and the report stand-in of the CLI tests, and a cluster of separate hosts, for
the executor tests."""

from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from coder_eval.sandbox.bwrap import bwrap_problem
from tests.executors.hosts import HostCluster, separate_hosts
from tests.test_cli import invoke, reports

__all__ = ["hosts", "invoke", "reports"]


@pytest.fixture
def hosts(tmp_path: Path) -> Iterator[HostCluster]:
    """A scheduler and two one-slot workers as separate hosts (``hosts.py``), skipped where
    bubblewrap or network namespaces cannot make them."""
    problem = asyncio.run(bwrap_problem())
    if problem is not None:
        pytest.skip(f"hosts are bubblewrap namespaces: {problem}")
    if shutil.which("ip") is None or os.geteuid() != 0:
        pytest.skip("worker hosts have network namespaces: root and `ip` (iproute2) are needed")
    with separate_hosts(tmp_path / "hosts", workers=2) as cluster:
        yield cluster
