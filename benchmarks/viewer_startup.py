"""How long ``coder-eval view`` takes from the command to a usable explorer in a browser.

Run: ``python benchmarks/viewer_startup.py [--repeats 3] [RUN_DIR ...]`` (default: the test fixture
runs). Each repeat starts ``coder-eval view --no-browser`` in a subprocess and drives Debian's
chromium (Playwright) to the page; prints, per repeat and as medians, the seconds until the URL is
printed and until the comparison table is on screen, and the ratio of the two (what the kernel and the
first comparison add to the server's start).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

from coder_eval.cli.viewer import free_port

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "runs"
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]


def one_start(runs: list[str]) -> tuple[float, float]:
    """(seconds to the printed URL, seconds to the comparison table) of one ``coder-eval view``."""
    with tempfile.TemporaryDirectory() as scratch, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        start = time.monotonic()
        server = subprocess.Popen(
            [sys.executable, "-m", "coder_eval", "view", *runs, "--no-browser", "--port", str(free_port())],
            cwd=scratch,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        try:
            assert server.stdout is not None
            line = ""
            while not line.startswith("explorer: "):
                line = server.stdout.readline()
                if not line and server.poll() is not None:
                    raise RuntimeError("coder-eval view exited before printing its URL")
            printed = time.monotonic() - start
            page = browser.new_page()
            page.goto(line.removeprefix("explorer: ").strip(), timeout=120_000)
            page.locator("table.explorer-comparison").wait_for(timeout=120_000)
            shown = time.monotonic() - start
        finally:
            server.terminate()
            server.wait(timeout=20)
            browser.close()
    return printed, shown


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("runs", nargs="*", default=[str(FIXTURES)])
    parser.add_argument("--repeats", type=int, default=3)
    options = parser.parse_args()
    results = [one_start(options.runs) for _ in range(options.repeats)]
    for i, (printed, shown) in enumerate(results):
        print(f"repeat {i}: URL printed after {printed:.1f} s, comparison table shown after {shown:.1f} s")
    url = statistics.median(r[0] for r in results)
    page = statistics.median(r[1] for r in results)
    print(f"median: URL {url:.1f} s, first page {page:.1f} s (page / URL = {page / url:.1f}x)")


if __name__ == "__main__":
    main()
