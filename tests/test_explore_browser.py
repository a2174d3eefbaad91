"""``coder-eval view`` served for real and driven in Chromium through Playwright: the explorer's tables,
a changed candidate, trajectory links that open a readable transcript page (never a raw .jsonl), and
no request to any host but the viewer's (Voila's page fetches Font Awesome from a CDN unless told not
to)."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from coder_eval.cli.viewer import free_port
from tests.helpers import REPO

CHROMIUM = Path("/usr/bin/chromium")
FIXTURE_RUNS = REPO / "tests" / "fixtures" / "runs"
START_TIMEOUT_S = 90
WAIT_MS = 90_000
BROWSER_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.skipif(
        not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium: apt-get install chromium"
    ),
    pytest.mark.skipif(
        not all(importlib.util.find_spec(m) for m in ("playwright", "voila")),
        reason="needs Playwright and Voila: .venv/bin/pip install playwright voila (the dev extra has both)",
    ),
]


def start_view(args: list[str], cwd: Path) -> tuple[subprocess.Popen[str], str]:
    """``coder-eval view ARGS --no-browser`` in a subprocess; returns it and the URL it printed."""
    env = {**os.environ, "JUPYTER_DATA_DIR": str(cwd / "data"), "JUPYTER_RUNTIME_DIR": str(cwd / "rt")}
    server = subprocess.Popen(
        [sys.executable, "-m", "coder_eval", "view", *args, "--no-browser"],
        cwd=cwd,
        env={**env, "PYTHONUNBUFFERED": "1", "NO_COLOR": "1"},
        stdout=subprocess.PIPE,
        stderr=(cwd / "view.log").open("w"),
        text=True,
    )
    assert server.stdout is not None
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        line = server.stdout.readline()
        if line.startswith("explorer: "):
            return server, line.removeprefix("explorer: ").strip()
        if not line and server.poll() is not None:
            break
    server.kill()
    raise RuntimeError(f"coder-eval view printed no URL: {(cwd / 'view.log').read_text()[-2000:]}")


@pytest.fixture
def view_url(tmp_path: Path) -> Iterator[str]:
    server, url = start_view([str(FIXTURE_RUNS), "--port", str(free_port())], tmp_path)
    try:
        yield url
    finally:
        server.terminate()
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(timeout=10)


def test_the_explorer_names_both_arms_and_links_readable_transcripts(view_url: str) -> None:
    from playwright.sync_api import sync_playwright

    assert re.fullmatch(r"http://127\.0\.0\.1:\d+/", view_url)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=BROWSER_ARGS)
        try:
            page = browser.new_page()
            requested: list[str] = []
            page.on("request", lambda request: requested.append(request.url))
            page.set_default_timeout(WAIT_MS)
            page.goto(view_url, timeout=WAIT_MS)
            table = page.locator("table.explorer-comparison")
            table.wait_for()
            header = table.locator("thead").inner_text()
            assert "baseline baseline" in header and "candidate with_hint" in header
            first_row = table.locator("tbody tr").first.inner_text()
            assert first_row.startswith("passed") and "%" in first_row and " pts " in first_row

            flips = page.locator("table.explorer-flips")
            assert "baseline → candidate" in flips.locator("thead").inner_text()
            hrefs = flips.locator("a").evaluate_all("links => links.map(link => link.href)")
            assert hrefs and all(h.startswith(f"{view_url}coder-eval/transcript?path=") for h in hrefs)
            link = flips.locator("a").first
            episode = link.inner_text()
            with page.context.expect_page() as opened:
                link.click()
            transcript = opened.value
            transcript.wait_for_load_state()
            assert transcript.locator("h1").inner_text().startswith(f"{episode} (task ")
            assert transcript.locator(".line.user").count() >= 1

            candidate = page.locator(".widget-dropdown", has_text="candidate").locator("select")
            candidate.select_option("with_skill")
            script = "() => document.querySelector('table.explorer-comparison')?.innerText.includes(%r)"
            page.wait_for_function(script % "candidate with_skill", timeout=WAIT_MS)
            assert "with_hint" not in table.inner_text()
            elsewhere = [url for url in requested if not url.startswith((view_url, "data:", "blob:"))]
            assert not elsewhere, f"requests to other hosts: {elsewhere}"
        finally:
            browser.close()
