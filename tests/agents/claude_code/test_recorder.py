from __future__ import annotations

from typing import Any

from claude_agent_sdk import (
    AssistantMessage,
    ResultMessage,
    StreamEvent,
    SystemMessage,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)

from coder_eval.agents.claude_code.recorder import Recorder, block_dict, result_text
from coder_eval.trajectory import TOOL_OUTPUT_LIMIT, Message, ToolCall, ToolResult, Usage

START_USAGE = {
    "input_tokens": 5,
    "output_tokens": 1,
    "cache_read_input_tokens": 100,
    "cache_creation_input_tokens": 7,
}


class Sink:
    def __init__(self) -> None:
        self.events: list[Any] = []

    def write(self, event: Any) -> None:
        self.events.append(event)


def stream(kind: str, parent: str | None = None, **event: Any) -> StreamEvent:
    return StreamEvent(uuid="u", session_id="s", event={"type": kind, **event}, parent_tool_use_id=parent)


def assistant(block: Any, message_id: str = "m1", parent: str | None = None) -> AssistantMessage:
    return AssistantMessage(
        content=[block],
        model="claude-sonnet-4-5",
        parent_tool_use_id=parent,
        usage=START_USAGE,
        message_id=message_id,
    )


def test_blocks_of_one_message_become_one_event_with_final_usage() -> None:
    sink = Sink()
    recorder = Recorder(sink)
    recorder.handle(stream("message_start", message={"usage": START_USAGE}))
    recorder.handle(assistant(TextBlock("Let me look.")))
    recorder.handle(assistant(ToolUseBlock("t1", "Bash", {"command": "ls"})))
    assert sink.events == []
    recorder.handle(stream("message_delta", usage={"output_tokens": 42}))
    recorder.handle(stream("message_stop"))
    message, call = sink.events
    assert isinstance(message, Message) and [b["type"] for b in message.content] == ["text", "tool_use"]
    assert message.usage == Usage(
        input_tokens=5, output_tokens=42, cache_read_tokens=100, cache_creation_tokens=7
    )
    assert isinstance(call, ToolCall) and (call.id, call.name, call.input) == (
        "t1",
        "Bash",
        {"command": "ls"},
    )
    assert recorder.usage.output_tokens == 42 and recorder.turns == 1


def quick_read_returned(sink: Sink) -> Recorder:
    """A recorder that has seen a Read's result come back before its message's stream ended (the CLI
    runs a tool once its block is complete, so a quick tool's result can beat ``message_delta``)."""
    recorder = Recorder(sink)
    recorder.handle(stream("message_start", message={"usage": START_USAGE}))
    recorder.handle(assistant(ToolUseBlock("t1", "Read", {"file_path": "a"})))
    recorder.handle(UserMessage(content=[ToolResultBlock("t1", "text of a")]))
    return recorder


def test_a_tool_result_before_the_message_ends_waits_for_its_final_usage() -> None:
    sink = Sink()
    recorder = quick_read_returned(sink)
    assert sink.events == []
    recorder.handle(stream("message_delta", usage={"output_tokens": 42}))
    recorder.handle(stream("message_stop"))
    message, call, result = sink.events
    assert isinstance(message, Message) and message.usage is not None and message.usage.output_tokens == 42
    assert isinstance(call, ToolCall) and isinstance(result, ToolResult) and result.output == "text of a"
    assert recorder.usage.output_tokens == 42


def test_a_held_tool_result_is_written_when_the_stream_never_ends() -> None:
    sink = Sink()
    quick_read_returned(sink).flush_all()
    assert [type(e) for e in sink.events] == [Message, ToolCall, ToolResult]
    assert sink.events[0].usage.output_tokens == 1  # the last usage the CLI told


def test_tool_result_is_cut_and_timed() -> None:
    sink = Sink()
    recorder = Recorder(sink)
    recorder.handle(assistant(ToolUseBlock("t1", "Bash", {"command": "yes"})))
    long = "y\n" * TOOL_OUTPUT_LIMIT
    recorder.handle(UserMessage(content=[ToolResultBlock("t1", long, is_error=True)]))
    result = sink.events[-1]
    assert isinstance(result, ToolResult)
    assert len(result.output) == TOOL_OUTPUT_LIMIT and result.output_chars == len(long)
    assert result.is_error and result.duration_s is not None and result.duration_s >= 0


def test_sub_agent_messages_keep_their_parent_and_flush_on_their_tool_result() -> None:
    sink = Sink()
    recorder = Recorder(sink)
    recorder.handle(assistant(ToolUseBlock("t2", "Bash", {"command": "ls"}), "m9", parent="t1"))
    recorder.handle(
        UserMessage(content=[ToolResultBlock("t2", [{"type": "text", "text": "a"}])], parent_tool_use_id="t1")
    )
    message, call, result = sink.events
    assert message.parent_tool_use_id == call.parent_tool_use_id == "t1"
    assert result.output == "a" and recorder.turns == 0


def test_init_is_kept_and_status_chatter_is_not() -> None:
    sink = Sink()
    recorder = Recorder(sink)
    data = {
        "type": "system",
        "subtype": "init",
        "claude_code_version": "2.1.0",
        "model": "m",
        "tools": ["Bash"],
    }
    recorder.handle(SystemMessage(subtype="init", data=data))
    recorder.handle(SystemMessage(subtype="status", data={"status": "requesting"}))
    assert recorder.version == "2.1.0" and recorder.model == "m"
    assert [e.content[0]["type"] for e in sink.events] == ["init"]


def test_api_error_messages_are_noted_and_results_flush_everything() -> None:
    sink = Sink()
    recorder = Recorder(sink)
    error = AssistantMessage(
        content=[TextBlock("Invalid API key")], model="<synthetic>", error="authentication_failed"
    )
    recorder.handle(error)
    recorder.handle(ResultMessage("success", 1, 0, True, 1, "s", result="Invalid API key"))
    assert recorder.api_errors == ["authentication_failed: Invalid API key"]
    assert len(sink.events) == 1 and recorder.turns == 0 and len(recorder.results) == 1


def test_content_helpers() -> None:
    assert block_dict(TextBlock("hi")) == {"type": "text", "text": "hi"}
    assert result_text([{"type": "text", "text": "a"}, {"type": "image"}]) == "a\n[image]"
    assert result_text(None) == ""


SUB_RESULT = {
    "status": "completed",
    "agentId": "a1",
    "resolvedModel": "claude-sonnet-4-5",
    "content": [{"type": "text", "text": "sub-done"}],
    "usage": {
        "input_tokens": 1,
        "output_tokens": 10,
        "cache_read_input_tokens": 500,
        "cache_creation_input_tokens": 9,
    },
}


def agent_result(result: dict[str, Any] | None = SUB_RESULT) -> UserMessage:
    return UserMessage(
        content=[ToolResultBlock("t1", [{"type": "text", "text": "sub-done"}])], tool_use_result=result
    )


def test_a_sub_agents_final_message_comes_from_its_agent_call_result() -> None:
    sink = Sink()
    recorder = Recorder(sink)
    recorder.handle(assistant(ToolUseBlock("t2", "Bash", {"command": "ls"}), "m9", parent="t1"))
    recorder.handle(agent_result())
    first, _call, final, result = sink.events
    assert (first.parent_tool_use_id, final.parent_tool_use_id, final.role) == ("t1", "t1", "assistant")
    assert final.content == [{"type": "text", "text": "sub-done"}] and final.model == "claude-sonnet-4-5"
    assert final.usage == Usage(
        input_tokens=1, output_tokens=10, cache_read_tokens=500, cache_creation_tokens=9
    )
    assert isinstance(result, ToolResult) and recorder.usage.cache_read_tokens == 600


def test_a_final_message_already_streamed_or_a_plain_tool_result_adds_nothing() -> None:
    sink = Sink()
    recorder = Recorder(sink)
    recorder.handle(assistant(TextBlock("sub-done"), "m9", parent="t1"))
    recorder.handle(agent_result())
    recorder.handle(UserMessage(content=[ToolResultBlock("t3", "ok")], tool_use_result={"stdout": "ok"}))
    failed = UserMessage(
        content=[ToolResultBlock("t4", "Error: exit 1", is_error=True)], tool_use_result="Error: exit 1"
    )
    recorder.handle(failed)  # the CLI gives some errors' results as a string
    assert [type(e).__name__ for e in sink.events] == ["Message", "ToolResult", "ToolResult", "ToolResult"]


def model_usage(output: int) -> dict[str, Any]:
    counts = {
        "inputTokens": 5,
        "outputTokens": output,
        "cacheReadInputTokens": 100,
        "cacheCreationInputTokens": 7,
    }
    return {"claude-sonnet-4-5": counts}


def result(model_usage: dict[str, Any]) -> ResultMessage:
    return ResultMessage("success", 1, 0, False, 1, "s", result="done", model_usage=model_usage)  # type: ignore[arg-type]


def test_each_turn_ends_with_what_its_messages_left_out() -> None:
    sink = Sink()
    recorder = Recorder(sink)
    recorder.handle(assistant(TextBlock("hi")))  # START_USAGE: output 1, as a message starts
    recorder.handle(result(model_usage(40)))
    recorder.handle(stream("message_start", message={"usage": START_USAGE}))
    recorder.handle(assistant(TextBlock("again")))
    recorder.handle(stream("message_delta", usage={"output_tokens": 30}))
    recorder.handle(stream("message_stop"))
    recorder.handle(
        result(
            {
                "claude-sonnet-4-5": {
                    **model_usage(70)["claude-sonnet-4-5"],
                    "inputTokens": 10,
                    "cacheReadInputTokens": 200,
                    "cacheCreationInputTokens": 14,
                }
            }
        )
    )
    _first, entry, second = [e for e in sink.events if isinstance(e, Message)]
    assert entry.role == "system" and entry.content[0]["type"] == "usage_reconciliation"
    assert entry.usage == Usage(output_tokens=39) and entry.content[0]["turn"] == 1
    total = sum((e.usage for e in sink.events if isinstance(e, Message) and e.usage), Usage())
    assert total == Usage(input_tokens=10, output_tokens=70, cache_read_tokens=200, cache_creation_tokens=14)
    assert second.content[0]["text"] == "again"  # turn 2's messages already agree: no second entry
