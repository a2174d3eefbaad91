"""``coder-eval view`` served for real and driven in Chromium through Playwright: the explorer's tables,
a changed candidate, trajectory links that open a readable transcript page (never a raw .jsonl), no
request to any host but the viewer's (Voila's page fetches Font Awesome from a CDN unless told not
to), and nothing but the login page for a browser without the URL's token."""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from coder_eval.cli.viewer import free_port
from tests.helpers import REPO, Served, served_view

CHROMIUM = Path("/usr/bin/chromium")
FIXTURE_RUNS = REPO / "tests" / "fixtures" / "runs"
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


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    with served_view([str(FIXTURE_RUNS), "--port", str(free_port())], tmp_path) as view:
        yield view


def test_the_explorer_names_both_arms_and_links_readable_transcripts(served: Served) -> None:
    from playwright.sync_api import sync_playwright

    assert re.fullmatch(r"http://127\.0\.0\.1:\d+/\?token=[0-9a-f]{48}", served.url)
    view_url = served.base
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=BROWSER_ARGS)
        try:
            page = browser.new_page()
            requested: list[str] = []
            page.on("request", lambda request: requested.append(request.url))
            page.set_default_timeout(WAIT_MS)
            page.goto(served.url, timeout=WAIT_MS)
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

            stranger = browser.new_context().new_page()  # no token, no cookie: the login page only
            for url in (view_url, hrefs[0]):
                stranger.goto(url, timeout=WAIT_MS)
                assert stranger.url.startswith(f"{view_url}login?next=")
                assert stranger.locator("table.explorer-comparison, .line").count() == 0
        finally:
            browser.close()


@pytest.fixture
def newer_first_url(tmp_path: Path) -> Iterator[str]:
    """The fixture runs with ``skill-ab`` (first by name) made a day after ``three-way``."""
    runs = tmp_path / "runs"
    shutil.copytree(FIXTURE_RUNS, runs)
    manifest = runs / "skill-ab" / "run.json"
    data = json.loads(manifest.read_text(encoding="utf-8"))
    manifest.write_text(json.dumps({**data, "created_at": "2025-03-02T12:00:00Z"}), encoding="utf-8")
    with served_view([str(runs), "--port", str(free_port())], tmp_path) as view:
        yield view.url


def test_the_explorer_opens_on_the_newest_run_and_compares_it_with_a_baseline_run(
    newer_first_url: str,
) -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=BROWSER_ARGS)
        try:
            page = browser.new_page()
            page.set_default_timeout(WAIT_MS)
            page.goto(newer_first_url, timeout=WAIT_MS)
            table = page.locator("table.explorer-comparison")
            table.wait_for()
            runs = page.locator(".widget-select-multiple select")
            picked = runs.evaluate("s => Array.from(s.selectedOptions).map(o => o.value)")
            assert picked == ["skill-ab — skill-ab"]  # the newest, though not the last by name
            assert "candidate with_skill" in table.locator("thead").inner_text()

            against = page.locator(".widget-dropdown", has_text="baseline run").locator("select")
            against.select_option(label="three-way — three-way")
            script = "() => document.querySelector('table.explorer-comparison')?.innerText.includes(%r)"
            page.wait_for_function(script % "baseline three-way · with_skill", timeout=WAIT_MS)
            assert "candidate skill-ab · with_skill" in table.locator("thead").inner_text()
            status = page.locator(".widget-html", has_text="against the baseline run").first.inner_text()
            assert "Run skill-ab against the baseline run three-way" in status and "tasks paired" in status
            summary = page.locator("table.explorer-summary").inner_text()
            assert "NaN" not in summary and "three-way · with_skill" in summary
        finally:
            browser.close()
