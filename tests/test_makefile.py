"""The ``make`` targets a new user runs first, as they run: ``make lab`` starts JupyterLab, as root too."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from tests.helpers import REPO


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_make_lab_serves_jupyterlab_as_whoever_runs_it(tmp_path: Path) -> None:
    port = free_port()
    options = f"--no-browser --port={port} --ServerApp.token=t --ServerApp.root_dir={tmp_path}"
    env = {**os.environ, "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"), "HOME": str(tmp_path)}
    lab = subprocess.Popen(
        ["make", "-s", "lab", f"LAB_OPTIONS={options}"], cwd=REPO, env=env, text=True,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and lab.poll() is None:
            try:
                with urllib.request.urlopen(
                    f"http://127.0.0.1:{port}/api/status?token=t", timeout=5
                ) as status:
                    assert status.status == 200
                    break
            except OSError:
                time.sleep(1)
        else:
            pytest.fail(
                f"make lab did not serve (exit {lab.poll()}):\n{lab.stdout.read() if lab.stdout else ''}"
            )
    finally:
        os.killpg(lab.pid, 15)
        lab.wait(timeout=30)
