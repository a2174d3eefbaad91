from coder_eval.agents.gemini.recorder import GeminiRecorder, usage_of
from coder_eval.trajectory import Message, ToolCall, ToolResult, Usage
from tests.agents.test_events import Sink

STATS = {"total_tokens": 74794, "input_tokens": 74563, "output_tokens": 231, "cached": 61802, "input": 12761}
RUN = [
    {"type": "init", "session_id": "s1", "model": "gemini-2.5-pro"},
    {"type": "message", "role": "user", "content": "do it"},
    {"type": "message", "role": "assistant", "content": "Run", "delta": True},
    {"type": "message", "role": "assistant", "content": "ning.", "delta": True},
    {"type": "tool_use", "tool_name": "run_shell_command", "tool_id": "t1", "parameters": {"command": "ls"}},
    {"type": "tool_result", "tool_id": "t1", "status": "success", "output": "a.py"},
    {"type": "tool_use", "tool_name": "read_file", "tool_id": "t2", "parameters": {"file_path": "/w/b"}},
    {"type": "tool_result", "tool_id": "t2", "status": "error", "error": {"message": "File not found"}},
    {"type": "message", "role": "assistant", "content": "Done.", "delta": True},
    {"type": "result", "status": "success", "stats": STATS},
]


def test_a_gemini_run_becomes_steps_with_the_runs_usage_on_the_last_message() -> None:
    sink = Sink()
    recorder = GeminiRecorder(sink, model="gemini-2.5-pro")
    for event in RUN:
        recorder.handle(event)

    messages = [e for e in sink.events if isinstance(e, Message)]
    assert [m.content[0].get("text") for m in messages] == ["Running.", None, "Done."]
    assert messages[-1].usage == Usage(input_tokens=12761, output_tokens=231, cache_read_tokens=61802)
    assert [c.name for c in sink.events if isinstance(c, ToolCall)] == ["run_shell_command", "read_file"]
    results = [(r.is_error, r.output) for r in sink.events if isinstance(r, ToolResult)]
    assert results == [(False, "a.py"), (True, "File not found")]
    assert (recorder.completed, recorder.session_id) == (True, "s1")


def test_an_error_result_is_kept() -> None:
    recorder = GeminiRecorder(Sink(), model=None)
    recorder.handle(
        {"type": "result", "status": "error", "error": {"type": "API", "message": "[API Error: 401]"}}
    )

    assert not recorder.completed and recorder.errors == ["[API Error: 401]"]


def test_usage_without_an_uncached_count() -> None:
    assert usage_of({"input_tokens": 100, "cached": 60, "output_tokens": 1}).input_tokens == 40
