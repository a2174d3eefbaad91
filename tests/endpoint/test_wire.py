"""A real model's answers read back off the wire, in every dialect, streamed or whole: each is what
the scripted server renders for the same message, read back to that message."""

from __future__ import annotations

import pytest

from coder_eval.endpoint.wire import read_answer
from coder_eval.scripted.dialect import ANTHROPIC
from coder_eval.scripted.gemini import GEMINI
from coder_eval.scripted.openai_responses import RESPONSES
from coder_eval.scripted.response import build_message

USAGE = {
    "input_tokens": 7,
    "output_tokens": 12,
    "cache_read_input_tokens": 300,
    "cache_creation_input_tokens": 0,
}
CONTENT = [
    {"type": "text", "text": "Let me look at the failing test before I change anything in calc.py."},
    {"type": "tool_use", "id": "toolu_9", "name": "Bash", "input": {"command": "python -m pytest -q tests/"}},
]
MESSAGE = build_message(CONTENT, model="m-1", message_id="msg_1", usage=USAGE)
DIALECTS = [ANTHROPIC, RESPONSES, GEMINI]


@pytest.mark.parametrize("dialect", DIALECTS, ids=lambda d: d.name)
def test_a_streamed_answer_reads_back_to_its_message(dialect: object) -> None:
    body = b"".join(dialect.events(MESSAGE))  # type: ignore[attr-defined]
    read = read_answer(dialect.name, body, "text/event-stream")  # type: ignore[attr-defined]
    assert [b["type"] for b in read["content"]] == ["text", "tool_use"]
    assert read["content"][0]["text"] == CONTENT[0]["text"]
    assert (read["content"][1]["name"], read["content"][1]["input"]) == ("Bash", CONTENT[1]["input"])
    assert read["usage"] == USAGE
    assert read["model"] == "m-1"


@pytest.mark.parametrize("dialect", DIALECTS, ids=lambda d: d.name)
def test_a_whole_answer_reads_back_to_its_message(dialect: object) -> None:
    import json

    body = json.dumps(dialect.body(MESSAGE)).encode()  # type: ignore[attr-defined]
    read = read_answer(dialect.name, body, "application/json")  # type: ignore[attr-defined]
    assert read["content"][1]["input"] == CONTENT[1]["input"]
    assert read["usage"] == USAGE


def test_a_responses_call_is_read_with_its_call_id() -> None:
    read = read_answer("responses", b"".join(RESPONSES.events(MESSAGE)), "text/event-stream")
    assert read["content"][1]["id"] == "call_9"


@pytest.mark.parametrize("body", [b"", b"not json", b"data: {\n\n", b'{"type": "message"}'])
def test_what_cannot_be_read_is_an_empty_answer_never_an_error(body: bytes) -> None:
    for dialect in ("anthropic", "responses", "gemini"):
        read = read_answer(
            dialect, body, "text/event-stream" if body.startswith(b"data") else "application/json"
        )
        assert read["content"] == [] and read["usage"] in (None, {k: 0 for k in USAGE})
