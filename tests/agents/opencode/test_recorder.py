from coder_eval.agents.opencode.recorder import OpenCodeRecorder, error_text, usage_of
from coder_eval.trajectory import Message, ToolCall, ToolResult, Usage
from tests.agents.test_events import Sink

TOKENS = {"total": 7740, "input": 1, "output": 44, "reasoning": 0, "cache": {"write": 7695, "read": 0}}
RUN = [
    {"type": "step_start", "sessionID": "ses_1", "part": {"type": "step-start"}},
    {"type": "text", "part": {"type": "text", "text": "Running."}},
    {
        "type": "tool_use",
        "part": {
            "type": "tool",
            "tool": "bash",
            "callID": "toolu_1",
            "state": {
                "status": "completed",
                "input": {"command": "exit 3"},
                "output": "",
                "metadata": {"exit": 3},
            },
        },
    },
    {"type": "step_finish", "part": {"reason": "tool-calls", "tokens": TOKENS, "cost": 0}},
    {"type": "step_start", "part": {"type": "step-start"}},
    {
        "type": "tool_use",
        "part": {
            "tool": "skill",
            "callID": "toolu_2",
            "state": {"status": "error", "input": {"name": "x"}, "error": "no such skill"},
        },
    },
    {"type": "step_finish", "part": {"reason": "tool-calls", "tokens": TOKENS}},
    {"type": "text", "part": {"type": "text", "text": "All done."}},
    {"type": "step_finish", "part": {"reason": "stop", "tokens": TOKENS}},
]


def test_each_step_is_a_message_with_its_tokens() -> None:
    sink = Sink()
    recorder = OpenCodeRecorder(sink, model="claude-sonnet-4-5")
    for event in RUN:
        recorder.handle(event)

    messages = [e for e in sink.events if isinstance(e, Message)]
    results = [e for e in sink.events if isinstance(e, ToolResult)]
    assert len(messages) == 3 and all(m.usage == usage_of(TOKENS) for m in messages)
    assert [c.name for c in sink.events if isinstance(c, ToolCall)] == ["bash", "skill"]
    assert [(r.exit_code, r.is_error, r.output) for r in results] == [
        (3, True, ""),
        (None, True, "no such skill"),
    ]
    assert (recorder.completed, recorder.session_id, recorder.steps.final_text) == (
        True,
        "ses_1",
        "All done.",
    )


def test_an_error_event_is_kept_and_the_run_is_not_complete() -> None:
    recorder = OpenCodeRecorder(Sink(), model=None)
    error = {"name": "APIError", "data": {"message": "invalid x-api-key", "statusCode": 401}}
    recorder.handle({"type": "error", "error": error})

    assert not recorder.completed
    assert recorder.errors == ["APIError: invalid x-api-key (HTTP 401)"] == [error_text(error)]


def test_reasoning_counts_as_output() -> None:
    assert usage_of({"input": 2, "output": 3, "reasoning": 4, "cache": {"read": 5}}) == Usage(
        input_tokens=2, output_tokens=7, cache_read_tokens=5
    )


def test_stream_errors_on_stderr_stop_the_run_only_when_no_retry_can_help() -> None:
    recorder = OpenCodeRecorder(Sink(), model=None)
    line = 'level=ERROR message="stream error" error.error="AI_APICallError: {}"'

    assert not recorder.stderr_line("level=INFO message=loop step=0")
    assert not recorder.stderr_line(line.format("Rate limited (429)"))
    assert recorder.stderr_line(line.format("Cannot connect to API: Unable to connect."))
    assert recorder.errors == [
        "AI_APICallError: Rate limited (429)",
        "AI_APICallError: Cannot connect to API: Unable to connect.",
    ]
