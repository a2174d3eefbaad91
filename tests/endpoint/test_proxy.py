"""The API proxy in front of a real model, tested against the scripted server behind TLS with a
self-signed certificate the proxy trusts: the real key goes upstream, the CLI's dummy never does."""

from __future__ import annotations

import json
import socket
import ssl
from collections.abc import Iterator
from pathlib import Path

import anthropic
import httpx
import pytest

from coder_eval.endpoint.proxy import DUMMY_KEY, ApiProxy, Credential
from coder_eval.scripted import ScriptedServer
from tests.endpoint.builders import self_signed, tls_context

REAL_KEY = "sk-real-0123456789"
SCRIPT = {
    "turns": [
        {"blocks": [{"text": "Let me look."}, {"tool_use": {"name": "Bash", "input": {"command": "ls"}}}]},
        {"error": {"kind": "overloaded", "times": 1}, "blocks": [{"text": "Done."}]},
    ]
}
TOOLS = [{"name": "Bash", "description": "run a command", "input_schema": {"type": "object"}}]


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return self_signed(tmp_path_factory.mktemp("tls"))


@pytest.fixture
def upstream(certificate: tuple[Path, Path]) -> Iterator[ScriptedServer]:
    with ScriptedServer(SCRIPT, tls=tls_context(*certificate)) as server:
        yield server


@pytest.fixture
def proxy(upstream: ScriptedServer, certificate: tuple[Path, Path]) -> Iterator[ApiProxy]:
    trusted = ssl.create_default_context(cafile=str(certificate[0]))
    with ApiProxy(upstream.base_url, Credential("x-api-key", REAL_KEY), verify=trusted) as running:
        yield running


def test_the_real_key_goes_upstream_and_the_exchange_is_recorded(
    upstream: ScriptedServer, proxy: ApiProxy
) -> None:
    client = anthropic.Anthropic(base_url=proxy.base_url, api_key=DUMMY_KEY, max_retries=0)
    ask = {"model": "claude-sonnet-4-5", "max_tokens": 100, "tools": TOOLS}
    with client.messages.stream(**ask, messages=[{"role": "user", "content": "hi"}]) as stream:
        first = stream.get_final_message()
    history = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": first.content},
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": first.content[1].id, "content": "a.txt"}],
        },
    ]
    with pytest.raises(anthropic.APIStatusError):
        client.messages.create(**ask, messages=history)
    assert client.messages.create(**ask, messages=history).content[0].text == "Done."  # type: ignore[union-attr]

    assert {r.credential for r in upstream.requests} == {REAL_KEY}
    calls = proxy.calls()
    assert [(c.status, c.position) for c in calls] == [(200, 0), (529, 1), (200, 1)]
    assert calls[0].content[1]["input"] == {"command": "ls"} and calls[0].usage is not None
    assert [(r.id, r.output) for r in calls[2].tool_results] == [(first.content[1].id, "a.txt")]
    assert proxy.answered() is True and not proxy.awaiting_reply()


def test_a_key_in_the_query_or_another_header_never_goes_upstream(
    upstream: ScriptedServer, proxy: ApiProxy
) -> None:
    body = {"model": "gemini-2.5-pro", "contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
    reply = httpx.post(
        f"{proxy.base_url}/v1beta/models/gemini-2.5-pro:generateContent?key=sk-leak&alt=json",
        json=body,
        headers={"authorization": "Bearer sk-leak", "x-goog-api-key": "sk-leak"},
    )
    assert reply.status_code == 200
    assert upstream.requests[-1].credential == REAL_KEY
    assert "sk-leak" not in json.dumps([r.body for r in upstream.requests])


def test_an_unreachable_upstream_is_a_recorded_non_answer() -> None:
    with ApiProxy("https://127.0.0.1:9", Credential("x-api-key", REAL_KEY)) as proxy:
        reply = httpx.post(f"{proxy.base_url}/v1/messages", json={"tools": TOOLS, "messages": []})
        assert reply.status_code == 502
        (call,) = proxy.calls()
    assert call.status is None and call.error is not None and "ConnectError" in call.error


def test_a_body_past_the_bound_is_refused_unread(proxy: ApiProxy) -> None:
    host, port = proxy.base_url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as connection:
        connection.sendall(
            f"POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Length: {9 << 20}\r\n\r\n".encode()
        )
        assert connection.recv(4096).startswith(b"HTTP/1.1 413")
    assert proxy.calls() == []


def test_listening_on_a_unix_socket_as_a_sandbox_reaches_it(
    upstream: ScriptedServer, certificate: tuple[Path, Path], tmp_path: Path
) -> None:
    trusted = ssl.create_default_context(cafile=str(certificate[0]))
    path = tmp_path / "run" / "model.sock"
    with ApiProxy(upstream.base_url, Credential("authorization", REAL_KEY), verify=trusted).start(
        path
    ) as proxy:
        transport = httpx.HTTPTransport(uds=str(path))
        with httpx.Client(transport=transport, base_url="http://127.0.0.1:18080") as client:
            reply = client.post(
                "/v1/responses",
                json={"model": "gpt-5.1-codex", "input": "hi", "tools": [{"name": "exec_command"}]},
            )
        assert reply.status_code == 200 and proxy.calls()[0].dialect == "responses"
    assert upstream.requests[-1].credential == REAL_KEY
