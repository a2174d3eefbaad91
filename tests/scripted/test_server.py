import dataclasses
import json
import socket
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import anthropic
import pytest

import coder_eval.scripted
from coder_eval.scripted import RecordedRequest, ScriptedServer, handler
from coder_eval.scripted import server as server_module
from coder_eval.scripted.request_log import RequestLog

from .conftest import MODEL, client, tool

TOOL_TURNS = {
    "turns": [
        {
            "blocks": [
                {"text": "Let me look."},
                {"tool_use": {"name": "Bash", "input": {"command": "ls -la"}}},
            ]
        },
        {"blocks": [{"text": "Done looking."}]},
    ]
}
ASK: dict[str, Any] = {
    "model": MODEL,
    "max_tokens": 100,
    "tools": [tool("Bash")],
    "messages": [{"role": "user", "content": "hi"}],
}


def raw(server: ScriptedServer, path: str, data: dict[str, Any] | None = None, method: str = "POST") -> Any:
    """(status, body bytes) of a plain urllib request."""
    payload = None if data is None else json.dumps(data).encode()
    request = urllib.request.Request(server.base_url + path, data=payload, method=method)
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def test_public_api_is_stable() -> None:
    assert sorted(coder_eval.scripted.__all__) == [
        "Block",
        "Choice",
        "ErrorSpec",
        "RecordedRequest",
        "Script",
        "ScriptRef",
        "ScriptedServer",
        "ToolUse",
        "Turn",
        "When",
        "check_inline_script",
        "load_script",
    ]


def test_create_replays_the_turn_and_logs_it(serve: Any) -> None:
    server = serve(TOOL_TURNS)

    message = client(server).messages.create(**ASK)

    assert [block.type for block in message.content] == ["text", "tool_use"]
    assert message.content[1].model_dump()["input"] == {"command": "ls -la"}
    assert (message.stop_reason, message.model) == ("tool_use", MODEL)
    recorded = server.requests[-1]
    assert (recorded.path, recorded.kind, recorded.turn, recorded.branch, recorded.status) == (
        "/v1/messages",
        "main",
        0,
        "blocks",
        200,
    )
    assert recorded.body["messages"] == ASK["messages"]


def test_stream_matches_create_and_the_next_turn_follows(serve: Any) -> None:
    server = serve({**TOOL_TURNS, "model": "claude-fixed"})
    api = client(server)

    with api.messages.stream(**ASK) as stream:
        first = stream.get_final_message()
    call_id = first.content[1].model_dump()["id"]
    history = [
        *ASK["messages"],
        {"role": "assistant", "content": [block.model_dump(exclude_none=True) for block in first.content]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call_id, "content": "a"}]},
    ]
    second = api.messages.create(**{**ASK, "messages": history})

    assert first.model == "claude-fixed"
    assert first.content[1].model_dump()["input"] == {"command": "ls -la"}
    assert [block.model_dump()["text"] for block in second.content] == ["Done looking."]


def test_each_request_is_logged_with_its_place_in_the_conversation_which_its_call_keeps(serve: Any) -> None:
    """The server reads a request's place once, as it answers; its ``model_call`` reuses that reading."""
    from coder_eval.endpoint.exchange import scripted_call

    server = serve(TOOL_TURNS)
    api = client(server)
    first = api.messages.create(**ASK)
    call_id = first.content[1].model_dump()["id"]
    history = [
        *ASK["messages"],
        {"role": "assistant", "content": [block.model_dump(exclude_none=True) for block in first.content]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call_id, "content": "a"}]},
    ]
    api.messages.create(**{**ASK, "messages": history})

    assert [r.position for r in server.requests] == [0, 1]
    calls = [scripted_call(r, seq) for seq, r in enumerate(server.requests)]
    assert [c.position for c in calls] == [0, 1]
    stripped = [scripted_call(dataclasses.replace(r, body=None), 0) for r in server.requests]
    assert [c.position for c in stripped] == [0, 1]  # kept when the log's budget dropped the body


def test_stream_event_sequence(serve: Any) -> None:
    server = serve(TOOL_TURNS)

    status, data = raw(server, "/v1/messages", {**ASK, "stream": True})

    events = [line.split(": ", 1)[1] for line in data.decode().splitlines() if line.startswith("event: ")]
    assert status == 200
    assert events == [
        "message_start",
        "ping",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    assert '"type": "input_json_delta"' in data.decode()


def test_forced_tool_choice_gets_the_scripted_verdict(serve: Any) -> None:
    verdict = {
        "tool_use": {"name": "submit_verdict", "input": {"passed": True, "score": 0.9, "reason": "ok"}}
    }
    server = serve({"turns": [{"blocks": [verdict]}]})

    message = client(server).messages.create(
        **{**ASK, "tools": [tool("submit_verdict")]}, tool_choice={"type": "tool", "name": "submit_verdict"}
    )

    assert message.content[0].model_dump()["input"] == {"passed": True, "score": 0.9, "reason": "ok"}


@pytest.mark.parametrize(
    ("kind", "exception", "status", "error_type"),
    [
        ("auth", anthropic.AuthenticationError, 401, "authentication_error"),
        ("rate_limit", anthropic.RateLimitError, 429, "rate_limit_error"),
        ("server", anthropic.InternalServerError, 500, "api_error"),
        ("overloaded", anthropic.OverloadedError, 529, "overloaded_error"),
    ],
)
@pytest.mark.parametrize("stream", [False, True])
def test_http_errors(
    serve: Any,
    kind: str,
    exception: type[anthropic.APIStatusError],
    status: int,
    error_type: str,
    stream: bool,
) -> None:
    server = serve({"turns": [{"error": {"kind": kind}}]})

    with pytest.raises(exception) as info:
        client(server).messages.create(**ASK, stream=stream)

    assert info.value.status_code == status
    body = info.value.body
    assert isinstance(body, dict) and body["type"] == "error" and body["error"]["type"] == error_type
    assert server.requests[-1].error == kind


def test_retries_succeed_after_an_error_with_times(serve: Any) -> None:
    server = serve(
        {"turns": [{"error": {"kind": "overloaded", "times": 1, "retry_after": 0.01}}, *TOOL_TURNS["turns"]]}
    )

    message = client(server, max_retries=1).messages.create(**ASK)

    assert message.content[0].model_dump()["text"] == "Let me look."
    assert [(r.status, r.turn, r.branch) for r in server.requests] == [(529, 0, "error"), (200, 1, "blocks")]


def test_cut_stream_breaks_the_connection(serve: Any) -> None:
    server = serve({"turns": [{"error": {"kind": "cut_stream"}}]})

    with pytest.raises(anthropic.APIConnectionError):
        client(server).messages.create(**ASK)
    with (
        pytest.raises(Exception, match="incomplete chunked read"),
        client(server).messages.stream(**ASK) as stream,
    ):
        stream.get_final_message()


@pytest.mark.parametrize("stream", [False, True])
def test_hang_times_the_client_out_and_does_not_block_stop(stream: bool) -> None:
    server = ScriptedServer({"turns": [{"error": {"kind": "hang"}}]}).start()

    with pytest.raises(Exception, match="timed out"):
        if stream:
            with client(server, timeout=0.3).messages.stream(**ASK) as events:
                events.get_final_message()
        else:
            client(server, timeout=0.3).messages.create(**ASK)
    started = time.monotonic()
    server.stop()

    assert time.monotonic() - started < 1


def test_count_tokens_estimates_the_request(serve: Any) -> None:
    server = serve(TOOL_TURNS)
    small = client(server).messages.count_tokens(model=MODEL, messages=[{"role": "user", "content": "hi"}])
    large = client(server).messages.count_tokens(
        model=MODEL, messages=[{"role": "user", "content": "x" * 4000}]
    )

    assert 0 < small.input_tokens < 20
    assert large.input_tokens - small.input_tokens == pytest.approx(1000, abs=5)
    assert server.requests[-1].kind == "count_tokens"


def test_usage_is_derived_from_sizes(serve: Any) -> None:
    server = serve({"turns": [{"blocks": [{"text": "y" * 400}]}]})

    message = client(server).messages.create(**{**ASK, "system": "s" * 4000})

    assert message.usage.output_tokens >= 100
    assert message.usage.input_tokens >= 1000


def test_other_paths_are_answered_and_logged(serve: Any) -> None:
    server = serve(TOOL_TURNS)

    assert raw(server, "/api/hello", method="HEAD")[0] == 200
    assert json.loads(raw(server, "/v1/models", method="GET")[1])["data"][0]["id"] == "claude-sonnet-4-5"
    status, data = raw(server, "/v1/unknown", {})

    assert (status, json.loads(data)["error"]["type"]) == (404, "not_found_error")
    assert [(r.method, r.path, r.status) for r in server.requests] == [
        ("HEAD", "/api/hello", 200),
        ("GET", "/v1/models", 200),
        ("POST", "/v1/unknown", 404),
    ]


def test_auxiliary_requests_get_a_short_answer(serve: Any) -> None:
    server = serve(TOOL_TURNS)

    message = client(server).messages.create(**{**ASK, "tools": []})
    first = client(server).messages.create(**ASK)

    assert message.content[0].model_dump()["text"] == "OK"
    assert first.content[0].model_dump()["text"] == "Let me look."
    assert [r.kind for r in server.requests] == ["auxiliary", "main"]


def test_requests_are_appended_to_a_jsonl_log(serve: Any, tmp_path: Path) -> None:
    log = tmp_path / "requests.jsonl"
    server = serve(TOOL_TURNS, seed=3, log_path=log)

    client(server).messages.create(**ASK)

    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(line["kind"], line["turn"], line["branch"]) for line in lines] == [("main", 0, "blocks")]


def test_base_url_needs_a_started_server() -> None:
    server = ScriptedServer(TOOL_TURNS)

    with pytest.raises(RuntimeError, match="not started"):
        _ = server.base_url
    with server:
        assert server.base_url.startswith("http://127.0.0.1:")


def test_a_body_over_the_cap_is_refused_unread_and_logged_without_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(handler, "MAX_BODY_BYTES", 1000)
    with ScriptedServer(TOOL_TURNS) as server:
        status, body = raw(server, "/v1/messages", {**ASK, "pad": "x" * 2000})
        after = client(server).messages.create(**ASK)

    assert status == 413 and json.loads(body)["error"]["type"] == "request_too_large"
    assert after.content[0].type == "text"  # the server goes on
    first = server.requests[0]
    assert (first.status, first.body) == (413, None)


def test_a_body_that_trickles_in_is_cut_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(handler, "BODY_DEADLINE_S", 0.5)
    with ScriptedServer(TOOL_TURNS) as server:
        host, port = server.base_url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port)), timeout=5) as conn:
            conn.sendall(b"POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{")
            started = time.monotonic()
            closed = conn.recv(100) == b""

    assert closed and time.monotonic() - started < 4


def test_connections_past_the_cap_are_closed_and_the_rest_answered(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(server_module, "MAX_CONNECTIONS", 4)
    with ScriptedServer(TOOL_TURNS) as server:
        host, port = server.base_url.removeprefix("http://").split(":")
        held = [socket.create_connection((host, int(port)), timeout=5) for _ in range(4)]
        time.sleep(0.2)  # the four are being served (idle, keep-alive)
        with socket.create_connection((host, int(port)), timeout=5) as extra:
            refused = extra.recv(100) == b""
        for conn in held:
            conn.close()
        time.sleep(0.2)
        answered = client(server).messages.create(**ASK)

    assert refused and answered.content[0].type == "text"


def test_the_log_keeps_bodies_only_within_its_budget() -> None:
    log = RequestLog(body_budget=100)
    for size in (60, 30, 60, 5):
        log.add(RecordedRequest("POST", "/v1/messages", {"n": size}, "main", 0, None, None, 200, 0.0, size))

    assert [r.body for r in log.snapshot()] == [{"n": 60}, {"n": 30}, None, None]
