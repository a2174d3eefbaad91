"""The ``explore`` notebook served by Voila and driven in a real Chromium through Playwright."""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import REPO

CHROMIUM = Path("/usr/bin/chromium")
FIXTURE_RUNS = REPO / "tests" / "fixtures" / "runs"
START_TIMEOUT_S = 60
WAIT_MS = 60_000

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium: apt-get install chromium"
    ),
    pytest.mark.skipif(
        not all(importlib.util.find_spec(m) for m in ("playwright", "voila")),
        reason="needs Playwright and Voila: .venv/bin/pip install playwright voila (the dev extra has both)",
    ),
]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def explore_notebook(folder: Path) -> Path:
    """notebooks/explore.py as an .ipynb whose ``runs`` parameter points at the fixture runs."""
    import jupytext

    nb = jupytext.read(REPO / "notebooks" / "explore.py")
    for cell in nb.cells:
        if "parameters" in cell.metadata.get("tags", []):
            cell.source = f"runs = {str(FIXTURE_RUNS)!r}"
    path = folder / "explore.ipynb"
    jupytext.write(nb, path)
    return path


def wait_until_listening(port: int, server: subprocess.Popen[bytes]) -> None:
    """Return once Voila accepts connections (a GET would already start a kernel)."""
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"voila exited with {server.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.2)
    raise TimeoutError(f"voila did not listen within {START_TIMEOUT_S} s")


@pytest.fixture
def voila_url(tmp_path: Path) -> Iterator[str]:
    notebook = explore_notebook(tmp_path)
    port = free_port()
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "voila",
            notebook.name,
            "--no-browser",
            f"--port={port}",
            "--Voila.ip=127.0.0.1",
            "--show_tracebacks=True",
        ],
        cwd=tmp_path,
        env={
            **os.environ,
            "JUPYTER_DATA_DIR": str(tmp_path / "data"),
            "JUPYTER_RUNTIME_DIR": str(tmp_path / "rt"),
        },
        stdout=subprocess.DEVNULL,
        stderr=(tmp_path / "voila.log").open("wb"),
    )
    try:
        wait_until_listening(port, server)
        yield f"http://127.0.0.1:{port}/"
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(timeout=10)


def test_changing_the_candidate_updates_the_comparison_table(voila_url: str) -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=str(CHROMIUM),
            args=["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        try:
            page = browser.new_page()
            page.set_default_timeout(WAIT_MS)
            page.goto(voila_url, timeout=WAIT_MS)
            table = page.locator("table.explorer-comparison")
            table.wait_for()
            assert "candidate with_hint" in table.inner_text()
            candidate = page.locator(".widget-dropdown", has_text="candidate").locator("select")
            candidate.select_option("with_skill")
            script = "() => document.querySelector('table.explorer-comparison')?.innerText.includes(%r)"
            page.wait_for_function(script % "candidate with_skill", timeout=WAIT_MS)
            assert "with_hint" not in table.inner_text()
        finally:
            browser.close()
