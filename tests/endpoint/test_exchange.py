"""Requests and answers as ``model_call`` events, in each wire dialect."""

from __future__ import annotations

from coder_eval.endpoint.exchange import Exchange, proxied_call, request_kind, scripted_call
from coder_eval.scripted.request_log import RecordedRequest

ANSWER = {
    "model": "claude-sonnet-4-5",
    "content": [
        {"type": "text", "text": "Run it."},
        {"type": "tool_use", "id": "toolu_x_7", "name": "Bash", "input": {"command": "ls"}},
    ],
    "usage": {
        "input_tokens": 3,
        "output_tokens": 5,
        "cache_read_input_tokens": 100,
        "cache_creation_input_tokens": 9,
    },
}
TOOLS = [{"name": "Bash"}]


def request(path: str, body: dict, dialect: str, **fields: object) -> RecordedRequest:
    base = dict(
        method="POST",
        path=path,
        body=body,
        kind="main",
        turn=0,
        branch="blocks",
        error=None,
        status=200,
        ts=1.5,
        answer=ANSWER,
        dialect=dialect,
    )
    return RecordedRequest(**{**base, **fields})  # type: ignore[arg-type]


def test_an_anthropic_request_and_its_answer() -> None:
    body = {
        "tools": TOOLS,
        "messages": [
            {"role": "user", "content": "go"},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {}}],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_1",
                        "content": [{"type": "text", "text": "a.txt"}],
                        "is_error": True,
                    }
                ],
            },
        ],
    }
    call = scripted_call(request("/v1/messages", body, "anthropic"), seq=4)
    assert (call.seq, call.position, call.status, call.kind, call.model) == (
        4,
        1,
        200,
        "main",
        "claude-sonnet-4-5",
    )
    assert call.content[1] == {
        "type": "tool_use",
        "id": "toolu_x_7",
        "name": "Bash",
        "input": {"command": "ls"},
    }
    assert [(r.id, r.output, r.is_error) for r in call.tool_results] == [("toolu_1", "a.txt", True)]
    assert (call.usage.total if call.usage else 0, call.cost_usd is not None) == (117, True)


def test_a_responses_call_keeps_the_call_id_the_cli_saw() -> None:
    body = {
        "tools": [{"name": "exec_command"}],
        "input": [
            {"type": "message", "role": "user", "content": "go"},
            {"type": "function_call", "call_id": "call_1", "name": "exec_command", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "call_1", "output": "Exit code: 0\nOutput:\nok"},
        ],
    }
    call = scripted_call(request("/v1/responses", body, "responses"), seq=0)
    assert call.content[1]["id"] == "call_x_7"
    assert [(r.id, r.output, r.is_error) for r in call.tool_results] == [
        ("call_1", "Exit code: 0\nOutput:\nok", None)
    ]


def test_gemini_calls_have_no_id_and_results_carry_their_names() -> None:
    path = "/v1beta/models/gemini-2.5-pro:streamGenerateContent"
    body = {
        "tools": [{"functionDeclarations": [{"name": "run_shell_command"}]}],
        "contents": [
            {"role": "user", "parts": [{"text": "go"}]},
            {"role": "model", "parts": [{"functionCall": {"name": "run_shell_command", "args": {}}}]},
            {
                "role": "user",
                "parts": [
                    {
                        "functionResponse": {
                            "id": "r1",
                            "name": "run_shell_command",
                            "response": {"output": "ok"},
                        }
                    }
                ],
            },
        ],
    }
    call = scripted_call(request(path, body, "gemini"), seq=0)
    assert call.content[1]["id"] is None
    assert [(r.id, r.name, r.output) for r in call.tool_results] == [("r1", "run_shell_command", "ok")]


def test_a_stalled_or_cut_answer_is_no_answer() -> None:
    body = {"tools": TOOLS, "messages": [{"role": "user", "content": "go"}]}
    call = scripted_call(request("/v1/messages", body, "anthropic", error="hang"), seq=0)
    assert (call.status, call.content) == (None, [])
    assert call.error is not None and call.error.startswith("hang")


def test_a_proxied_error_answer_is_recorded_with_its_status() -> None:
    body = {"tools": TOOLS, "messages": [{"role": "user", "content": "go"}]}
    call = proxied_call(Exchange("anthropic", "/v1/messages", body, 529, None, "Overloaded"), seq=2)
    assert (call.source, call.status, call.error, call.usage) == ("proxy", 529, "Overloaded", None)


def test_request_kinds() -> None:
    messages = [{"role": "user", "content": "go"}]
    assert request_kind("/v1/messages", {"messages": messages}) == "auxiliary"
    system = [{"type": "text", "text": "x-anthropic-billing-header: cc_is_subagent=true"}]
    assert (
        request_kind("/v1/messages", {"tools": TOOLS, "system": system, "messages": messages}) == "subagent"
    )
    assert request_kind("/v1/messages/count_tokens", {}) == "count_tokens"
    assert request_kind("/v1/models", None) == "other"
