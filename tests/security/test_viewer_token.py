"""Another local process (or user) against ``coder-eval view``: the port is on 127.0.0.1, where any
local process can connect. Without the token the server printed, it reads no transcript, no page,
no kernel list, opens no kernel channel and reads no page request a preheated kernel is handed: every run it shows stays the viewer's user's. The
server's own process reads the same runs either way, so the attack is the same on every driver."""

from __future__ import annotations

import http.client
from pathlib import Path
from urllib.parse import urlencode, urlsplit

import pytest

from tests.helpers import REPO, served_view

RUNS = REPO / "tests" / "fixtures" / "runs"
EPISODE = RUNS / "three-way" / "episodes" / "csv-report--baseline--r0.jsonl"

pytestmark = [pytest.mark.slow]


def status(base: str, path: str, headers: dict[str, str] | None = None) -> tuple[int, str]:
    """The status and the body of one request, redirects not followed."""
    address = urlsplit(base)
    conn = http.client.HTTPConnection(address.hostname or "", address.port, timeout=60)
    try:
        conn.request("GET", path, headers=headers or {})
        answer = conn.getresponse()
        return answer.status, answer.read().decode(errors="replace")
    finally:
        conn.close()


def test_a_request_without_the_token_reads_nothing(tmp_path: Path) -> None:
    pytest.importorskip("voila")
    from coder_eval.cli.viewer import free_port

    with served_view([str(RUNS), "--port", str(free_port())], tmp_path) as view:
        transcript = f"/coder-eval/transcript?{urlencode({'path': EPISODE})}"
        upgrade = {"Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "13"}
        upgrade["Sec-WebSocket-Key"] = "dGhlIHNhbXBsZSBub25jZQ=="
        attempts = {
            "the transcript": status(view.base, transcript),
            "the explorer": status(view.base, "/"),
            "the kernels": status(view.base, "/api/kernels"),
            "a kernel's channels": status(view.base, f"/api/kernels/{'0' * 32}/channels", upgrade),
            "a wrong token": status(view.base, f"{transcript}&token={'0' * 48}"),
        }
        # Voila's socket handing a preheated kernel its page's request (the URL, token and all) is
        # not served at all: it would ask for no token.
        attempts["a kernel's page request"] = status(
            view.base, "/voila/query/00000000-0000-4000-8000-000000000000", upgrade
        )

        for what, (code, body) in attempts.items():
            assert code in (302, 403) or (what == "a kernel's page request" and code == 404), (what, code)
            assert "Summarise sales.csv" not in body, what
        assert status(view.base, f"{transcript}&token={view.token}")[0] == 200
