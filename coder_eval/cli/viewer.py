"""The explorer as an app (``coder-eval view``): Voila serving ``notebooks/explore.py`` with the runs
preloaded, on 127.0.0.1, plus a page that shows any of their trajectories as a readable transcript.

Example::

    serve([Path("runs")], port=0, open_browser=False)
    # prints "explorer: http://127.0.0.1:PORT/?token=3f9c…": the URL with the server's token

Every page, kernel and transcript asks for a token made at start (as Jupyter's own servers do): a
request without it is sent to the login page (an API or websocket request is refused, 403), so
another local user or process cannot read the runs through the port. The browser is opened through
a page only this user can read, so the token is never on a command line.

The transcript page (``/coder-eval/transcript?path=<trajectory>``) is what the explorer's links open:
the server puts its URL in ``CODER_EVAL_TRANSCRIPT_URL`` for the kernels it starts. In JupyterLab the
same page comes from this module as a Jupyter server extension
(``jupyter lab --ServerApp.jpserver_extensions='{"coder_eval.cli.viewer": true}'``, which ``make lab`` does).
Voila needs the ``lab`` extra; importing this module without it raises ImportError.
"""

from __future__ import annotations

import html
import importlib.resources
import os
import socket
import tempfile
import threading
import webbrowser
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import tornado.web
from jupyter_server.base.handlers import JupyterHandler
from jupyter_server.utils import url_path_join
from voila.app import Voila
from voila.request_info_handler import RequestInfoSocketHandler

from coder_eval.errors import TrajectoryError
from coder_eval.transcript import transcript_text

TRANSCRIPT_ROUTE = "coder-eval/transcript"
TRANSCRIPT_URL_ENV = "CODER_EVAL_TRANSCRIPT_URL"
"""Read by ``coder_eval.analysis.views.notebook.trajectory_links`` in the kernels (named there too, so the
server does not import the analysis stack)."""
EXPLORE_TEMPLATE = "explore.py"
PREHEAT_KERNEL = True
"""Start the explorer's kernel and run its notebook as the server starts (Voila's pool of one
preheated kernel), so the first page is ready sooner; the next is made while the first is used."""
REFILL_DELAY = 10.0
"""Seconds between a page taking the preheated kernel and Voila starting the next one: at once (its
default, 1 s), the next kernel's start and imports take a core from the first page's notebook."""
PAGE_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 70em; color: #222; }
h1 { font-size: 1.3em; word-break: break-all; }
.line { white-space: pre-wrap; font-family: ui-monospace, monospace; font-size: 0.9em; margin: 0.1em 0; }
.user { color: #1a4f8b; } .assistant { color: #222; font-weight: 600; } .system { color: #777; }
.call { color: #6a3d9a; } .result { color: #555; } .criterion { color: #8a5a00; }
.end { border-top: 1px solid #ccc; padding-top: 0.4em; font-weight: 600; } .problem { color: #b00; }
.phase { color: #777; } .end.more { border-top: none; padding-top: 0; font-weight: normal; }
"""
LINE_CLASSES = (
    ("[user", "user"),
    ("[assistant", "assistant"),
    ("[system", "system"),
    ("  → ", "call"),
    ("  ← ", "result"),
    ("  ⇢ ", "call"),
    ("-- ", "phase"),
    ("criterion ", "criterion"),
    ("= ", "end"),
    ("! ", "problem"),
)


def transcript_page(path: Path) -> str:
    """A trajectory as a standalone HTML page: the ``coder-eval show`` transcript, one styled line each.

    Example: ``transcript_page(Path("runs/latest/episodes/t--a--r0.jsonl")).startswith("<!DOCTYPE html>")``
    """
    lines = transcript_text(path).split("\n")
    body = "\n".join(
        f'<div class="line {kind}">{html.escape(line)}</div>'
        for line, kind in zip(lines[1:], _classes(lines[1:]), strict=True)
    )
    title = html.escape(lines[0].lstrip("# ") if lines else path.stem)
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{title}</title>'
        f"<style>{PAGE_STYLE}</style></head>\n<body><h1>{title}</h1>\n{body}\n</body></html>\n"
    )


def _classes(lines: list[str]) -> list[str]:
    """Each line's style: by the harness's prefix; a line without one (agent text behind the gutter,
    a criterion's evidence, an error) continues the line before it."""
    kinds, kind = [], ""
    for line in lines:
        own = next((name for prefix, name in LINE_CLASSES if line.startswith(prefix)), None)
        kind = own if own is not None else kind
        kinds.append(kind if own is not None or not kind else f"{kind} more")
    return kinds


def served_trajectory(path_text: str, allowed: Callable[[Path], bool]) -> Path:
    """The trajectory a transcript request names, if ``allowed``; ``HTTPError(404)`` otherwise (the
    same answer for a forbidden and a missing file, so the page reveals nothing about other files)."""
    path = Path(path_text).resolve()
    if path.suffix != ".jsonl" or not path.is_file() or not allowed(path):
        raise tornado.web.HTTPError(404)
    return path


class TranscriptHandler(JupyterHandler):
    """The transcript page, for logged-in users only: in ``coder-eval view`` (who holds its token;
    only trajectories of the runs it was given) and in a Jupyter server (any trajectory file)."""

    allowed: Callable[[Path], bool]

    def initialize(self, allowed: Callable[[Path], bool]) -> None:
        self.allowed = allowed

    @tornado.web.authenticated
    def get(self) -> None:
        path = served_trajectory(self.get_argument("path"), self.allowed)
        try:
            text = transcript_page(path)
        except TrajectoryError as exc:
            raise tornado.web.HTTPError(422, reason=str(exc)[:200]) from exc
        self.set_header("Content-Type", "text/html; charset=utf-8")
        self.finish(text)


def inside(folders: Sequence[Path]) -> Callable[[Path], bool]:
    """A check that a path lies inside one of ``folders`` (resolved)."""
    roots = [f.resolve() for f in folders]
    return lambda path: any(path.is_relative_to(root) for root in roots)


OFFLINE_PAGE = """{%- extends 'voila/templates/lab/index.html.j2' -%}
{#- Voila's lab page, less the two stylesheets it fetches from a CDN (Font Awesome, for icons the
    explorer does not use): the page asks nothing of any host but the viewer's. -#}
{%- block notebook_css -%}
{{ super() | replace(FONT_AWESOME_ALL, "") | replace(FONT_AWESOME_SHIMS, "") }}
{%- endblock notebook_css -%}
"""
FONT_AWESOME = "https://cdn.jsdelivr.net/npm/@fortawesome/fontawesome-free@^5/css/"
CDN_LINKS = {
    "FONT_AWESOME_ALL": f'<link rel="stylesheet" href="{FONT_AWESOME}all.min.css" type="text/css" />',
    "FONT_AWESOME_SHIMS": f'<link rel="stylesheet" href="{FONT_AWESOME}v4-shims.min.css" type="text/css" />',
}
"""The CDN links Voila's lab template writes, removed by ``OFFLINE_PAGE`` (a browser test checks that
the explorer makes no request to any other host)."""


def offline_page(folder: Path) -> Path:
    """A template folder whose ``index.html.j2`` is Voila's lab page without its CDN stylesheets."""
    pages = folder / "page"
    pages.mkdir(exist_ok=True)
    text = OFFLINE_PAGE
    for name, link in CDN_LINKS.items():
        text = text.replace(name, repr(link))
    (pages / "index.html.j2").write_text(text, encoding="utf-8")
    return pages


class Viewer(Voila):  # type: ignore[misc]
    """Voila with the transcript page and an offline page, printing its URL once it listens."""

    allowed: Callable[[Path], bool] = staticmethod(lambda path: False)
    announce: Callable[[str], None] = staticmethod(print)
    page_dir: Path | None = None
    opened: list[Path]

    def setup_template_dirs(self) -> None:
        super().setup_template_dirs()
        if self.page_dir is not None:
            self.template_paths.insert(0, str(self.page_dir))

    def init_settings(self) -> dict[str, Any]:
        # A preheated kernel is started with the environment as it is here, before the handlers.
        os.environ[TRANSCRIPT_URL_ENV] = url_path_join(self.base_url, TRANSCRIPT_ROUTE)
        settings: dict[str, Any] = super().init_settings()
        return settings

    def init_handlers(self) -> list[Any]:
        route = url_path_join(self.server_url, TRANSCRIPT_ROUTE)
        # Voila's socket that hands a preheated kernel the page's request (its query string holds the
        # token) asks for no token itself; the explorer never reads the request, so it is not served.
        handlers = [h for h in super().init_handlers() if h[1] is not RequestInfoSocketHandler]
        return [(route, TranscriptHandler, {"allowed": self.allowed}), *handlers]

    def listen(self) -> None:
        import tornado.ioloop

        tornado.ioloop.IOLoop.current().add_callback(lambda: self.announce(self.display_url))
        super().listen()

    def launch_browser(self) -> None:
        """Open the URL with its token through a page only this user can read (as Jupyter does): a
        token on the browser's command line would be in every local user's ``ps``."""
        fd, page = tempfile.mkstemp(suffix=".html", prefix="coder-eval-view-")
        target = html.escape(self.display_url, quote=True)
        self.opened.append(Path(page))  # removed when the server stops
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(f'<!DOCTYPE html><meta http-equiv="refresh" content="0;url={target}">')
        threading.Thread(target=webbrowser.open, args=(Path(page).as_uri(),), daemon=True).start()


def explore_notebook(runs: Sequence[Path], folder: Path) -> Path:
    """``notebooks/explore.py`` as ``<folder>/explore.ipynb`` with its ``runs`` parameter set."""
    import jupytext

    template = importlib.resources.files("coder_eval.notebooks") / EXPLORE_TEMPLATE
    nb = jupytext.reads(template.read_text(encoding="utf-8"), fmt="py:percent")
    joined = ",".join(str(run.resolve()) for run in runs)
    for cell in nb.cells:
        if "parameters" in cell.metadata.get("tags", []):
            cell.source = f"runs: str = {joined!r}  # set by coder-eval view"
    path = folder / "explore.ipynb"
    jupytext.write(nb, path)
    return path


def free_port() -> int:
    """A TCP port nobody listens on at 127.0.0.1 right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def serve(
    runs: Sequence[Path],
    folder: Path,
    port: int = 0,
    open_browser: bool = True,
    announce: Callable[[str], None] = print,
) -> None:
    """Serve the explorer on ``runs`` from ``folder`` (a scratch directory) until interrupted.

    ``port`` 0 picks a free one; ``announce`` receives the URL once the server listens.
    """
    notebook = explore_notebook(runs, folder)
    app = Viewer()
    app.allowed = inside(runs)
    app.announce = announce
    app.page_dir = offline_page(folder)
    app.opened = []
    app.initialize(
        [
            str(notebook),
            f"--port={port or free_port()}",
            "--Voila.ip=127.0.0.1",
            "--Voila.port_retries=0",
            f"--Voila.root_dir={folder}",
            "--Voila.open_browser=" + str(open_browser),
            "--Voila.auto_token=True",  # every request needs it: the runs are no other local user's
            "--show_tracebacks=True",
            f"--VoilaConfiguration.preheat_kernel={PREHEAT_KERNEL}",
            f"--VoilaKernelManager.fill_delay={REFILL_DELAY}",
        ]
    )
    try:
        app.start()
    finally:
        for page in app.opened:
            page.unlink(missing_ok=True)


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    return [{"module": "coder_eval.cli.viewer"}]


def _load_jupyter_server_extension(serverapp: Any) -> None:
    """The transcript page in JupyterLab / Jupyter Server; kernels started after this find its URL."""
    base_url = serverapp.web_app.settings["base_url"]
    route = url_path_join(base_url, TRANSCRIPT_ROUTE)
    os.environ[TRANSCRIPT_URL_ENV] = route
    serverapp.web_app.add_handlers(".*$", [(route, TranscriptHandler, {"allowed": lambda path: True})])
