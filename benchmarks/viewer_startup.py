"""How long ``coder-eval view`` takes from the command to a usable explorer in a browser.

Run: ``python benchmarks/viewer_startup.py [--repeats 3] [--open-after S] [--baseline REV]
[RUN_DIR ...]`` (default: the test fixture runs). Each repeat starts ``coder-eval view --no-browser``
in a subprocess and drives Debian's chromium (Playwright) to the page ``S`` seconds after the URL is
printed (0: at once; a user reads and clicks), then does the same with the baseline: the viewer of
commit ``REV`` (default ``BASELINE``: its kernel preheated, the explorer drawing every figure before
its cell ends), its ``coder_eval`` and notebooks taken from git into a scratch folder. With
``--baseline unpreheated`` the baseline is this viewer without its preheated kernel (the kernel
started and the notebook run only when the browser asks for the page). Prints, per repeat and as
medians, the seconds until the URL is printed and until the comparison table is on screen (the ``S``
seconds of waiting left out), the ratio of the two (what the kernel and the first comparison add to
the server's start), and now / before.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

from coder_eval.cli.viewer import free_port

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "tests" / "fixtures" / "runs"
BASELINE = "b573919"
"""The commit before the explorer drew its figures after the table."""
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]


START = (
    "import sys\nfrom coder_eval.lazy import without_iri_format\nwithout_iri_format()\n"
    "import coder_eval.cli.viewer as v\nv.PREHEAT_KERNEL = {preheat}\n"
    "from coder_eval.cli import main\nmain(sys.argv[1:])"
)
"""``coder-eval`` with the viewer's kernel preheated or not (both started alike, so only that differs)."""


def one_start(
    runs: list[str], before: bool = False, open_after: float = 0.0, baseline: Path | None = None
) -> tuple[float, float]:
    """(seconds to the printed URL, seconds to the comparison table) of one ``coder-eval view``, the
    page opened ``open_after`` seconds after the URL is printed (the table's time counts from then)."""
    with tempfile.TemporaryDirectory() as scratch, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        start = time.monotonic()
        server = subprocess.Popen(
            [
                *command(before and baseline is None),
                "view",
                *runs,
                "--no-browser",
                "--port",
                str(free_port()),
            ],
            cwd=scratch,
            env={**os.environ, "PYTHONPATH": str(baseline)} if before and baseline else None,
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
            time.sleep(open_after)
            page = browser.new_page()
            page.goto(line.removeprefix("explorer: ").strip(), timeout=120_000)
            page.locator("table.explorer-comparison").wait_for(timeout=120_000)
            shown = time.monotonic() - start - open_after
        finally:
            server.terminate()
            server.wait(timeout=20)
            browser.close()
    return printed, shown


def command(unpreheated: bool) -> list[str]:
    """How to start ``coder-eval``: as it is, or without the preheated kernel."""
    return [sys.executable, "-c", START.format(preheat=not unpreheated)]


def baseline_tree(rev: str, scratch: Path) -> Path:
    """``coder_eval`` of commit ``rev``, with its notebooks where the installed package has them."""
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", rev, "coder_eval", "notebooks"], capture_output=True, check=True
    )
    subprocess.run(["tar", "-x", "-C", str(scratch)], input=archive.stdout, check=True)
    (scratch / "notebooks").rename(scratch / "coder_eval" / "notebooks")
    return scratch


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("runs", nargs="*", default=[str(FIXTURES)])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--open-after", type=float, default=0.0,
        help="Seconds between the printed URL and opening the page (a user's reading and clicking); "
        "the table's time is then the command's own, without them.",
    )  # fmt: skip
    parser.add_argument("--baseline", default=BASELINE, help="A git revision, or 'unpreheated'.")
    options = parser.parse_args()
    found: dict[str, list[tuple[float, float]]] = {"now": [], "before": []}
    with tempfile.TemporaryDirectory(prefix="viewer-startup-") as scratch:
        unpreheated = options.baseline == "unpreheated"
        baseline = None if unpreheated else baseline_tree(options.baseline, Path(scratch))
        for how in found:  # bytecode and page caches
            one_start(options.runs, how == "before", options.open_after, baseline)
        for i in range(options.repeats):
            for how, results in found.items():
                printed, shown = one_start(options.runs, how == "before", options.open_after, baseline)
                results.append((printed, shown))
                print(f"repeat {i} ({how}): URL after {printed:.1f} s, table shown after {shown:.1f} s")
    medians = {how: [statistics.median(r[part] for r in results) for part in (0, 1)]
               for how, results in found.items()}  # fmt: skip
    print(f"before: {options.baseline}")
    for how, (url, page) in medians.items():
        print(f"median, {how}: URL {url:.1f} s, first page {page:.1f} s (page / URL = {page / url:.1f}x)")
    (url, page), (url_before, page_before) = medians["now"], medians["before"]
    print(f"now / before: URL {url / url_before:.2f}x, first page {page / page_before:.2f}x "
          f"(load average {os.getloadavg()[0]:.1f})")  # fmt: skip


if __name__ == "__main__":
    main()
