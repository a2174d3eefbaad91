import json

from coder_eval.agents.codex.recorder import CodexRecorder, unwrap, usage_of
from coder_eval.trajectory import Message, ToolCall, ToolResult, Usage
from tests.agents.test_events import Sink

RUN = [
    {"type": "thread.started", "thread_id": "t1"},
    {"type": "turn.started"},
    {"type": "item.completed", "item": {"id": "item_0", "type": "agent_message", "text": "Running."}},
    {
        "type": "item.started",
        "item": {
            "id": "item_1",
            "type": "command_execution",
            "command": "/bin/bash -lc 'echo hi > out.txt'",
            "status": "in_progress",
        },
    },
    {
        "type": "item.completed",
        "item": {
            "id": "item_1",
            "type": "command_execution",
            "command": "/bin/bash -lc 'echo hi > out.txt'",
            "aggregated_output": "",
            "exit_code": 0,
            "status": "completed",
        },
    },
    {
        "type": "item.started",
        "item": {
            "id": "item_2",
            "type": "file_change",
            "changes": [{"path": "/w/a.txt", "kind": "add"}],
            "status": "in_progress",
        },
    },
    {
        "type": "item.completed",
        "item": {
            "id": "item_2",
            "type": "file_change",
            "changes": [{"path": "/w/a.txt", "kind": "add"}],
            "status": "completed",
        },
    },
    {"type": "item.completed", "item": {"id": "item_3", "type": "agent_message", "text": "All done."}},
    {
        "type": "turn.completed",
        "usage": {
            "input_tokens": 100,
            "cached_input_tokens": 80,
            "output_tokens": 7,
            "reasoning_output_tokens": 0,
        },
    },
]


def record(events: list[dict[str, object]]) -> tuple[CodexRecorder, Sink]:
    sink = Sink()
    recorder = CodexRecorder(sink, model="gpt-5.1-codex")
    for event in json.loads(json.dumps(events)):
        recorder.handle(event)
    recorder.steps.finish()
    return recorder, sink


def test_a_codex_turn_becomes_messages_calls_results_and_usage() -> None:
    recorder, sink = record(RUN)

    calls = [e for e in sink.events if isinstance(e, ToolCall)]
    results = [e for e in sink.events if isinstance(e, ToolResult)]
    assert [(c.name, c.input) for c in calls] == [
        ("exec_command", {"cmd": "echo hi > out.txt"}),
        ("apply_patch", {"changes": [{"path": "/w/a.txt", "kind": "add"}]}),
    ]
    assert [(r.exit_code, r.is_error) for r in results] == [(0, False), (None, False)]
    last = [e for e in sink.events if isinstance(e, Message)][-1]
    assert last.usage == Usage(input_tokens=20, cache_read_tokens=80, output_tokens=7)
    assert (recorder.completed, recorder.errors, recorder.thread_id) == (True, [], "t1")


def test_a_failed_turn_keeps_the_provider_error() -> None:
    failed = {"type": "turn.failed", "error": {"message": "unexpected status 401 Unauthorized"}}
    recorder, _ = record([{"type": "turn.started"}, {"type": "error", "message": "x"}, failed])

    assert not recorder.completed and recorder.errors[-1] == "unexpected status 401 Unauthorized"


def test_a_failing_command_is_an_error_result() -> None:
    item = {
        "id": "i",
        "type": "command_execution",
        "command": "false",
        "aggregated_output": "",
        "exit_code": 1,
    }
    _, sink = record([{"type": "item.completed", "item": item}])

    result = next(e for e in sink.events if isinstance(e, ToolResult))
    assert (result.exit_code, result.is_error) == (1, True)


def test_unwrap_and_usage() -> None:
    assert unwrap("/bin/bash -lc 'ls -la'") == "ls -la"
    assert unwrap("ls") == "ls"
    assert usage_of({}) == Usage()
