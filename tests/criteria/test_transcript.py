"""The transcript view: calls paired with results, message-only agents, the final answer."""

from __future__ import annotations

from coder_eval.criteria.transcript import assistant_texts, final_text, tool_steps
from coder_eval.trajectory import Event, Message, ToolCall
from tests.criteria.builders import Transcript


def test_calls_pair_with_results_and_success() -> None:
    steps = tool_steps(Transcript().bash("make", exit_code=2).bash("ls").events)
    assert [(s.index, s.command, s.succeeded) for s in steps] == [(0, "make", False), (1, "ls", True)]


def test_call_without_result_did_not_succeed() -> None:
    (step,) = tool_steps([ToolCall(id="c1", name="Bash", input={"command": "sleep 999"})])
    assert step.result is None
    assert not step.succeeded


def test_tool_use_blocks_count_once() -> None:
    use = {"type": "tool_use", "id": "u1", "name": "Read", "input": {"file_path": "a.py"}}
    events: list[Event] = [
        Message(role="assistant", content=[{"type": "text", "text": "reading"}, use]),
        ToolCall(id="u1", name="Read", input={"file_path": "a.py"}),
        Message(role="assistant", content=[{**use, "id": "u2", "input": {"file_path": "b.py"}}]),
        Message(
            role="user",
            content=[{"type": "tool_result", "tool_use_id": "u2", "is_error": True, "content": []}],
        ),
    ]
    steps = tool_steps(events)
    assert [s.call.input["file_path"] for s in steps] == ["a.py", "b.py"]
    assert steps[1].result is not None and steps[1].result.is_error


def test_final_text_prefers_reported_message_then_last_top_level_text() -> None:
    events = Transcript().say("first").say("last").events
    events.append(
        Message(role="assistant", content=[{"type": "text", "text": "sub"}], parent_tool_use_id="t")
    )
    assert final_text(events, "reported") == "reported"
    assert final_text(events) == "last"
    assert assistant_texts(events) == ["first", "last", "sub"]


def test_every_agents_tool_names_are_graded_as_one_vocabulary() -> None:
    from tests.criteria.builders import Transcript, context, grade

    events = (
        Transcript()
        .tool("exec_command", {"cmd": "pytest -q"}, exit_code=0)
        .tool("run_shell_command", {"command": "ls"})
        .tool("bash", {"command": "make"})
        .tool("replace", {"file_path": "a.py", "old_string": "x", "new_string": "y"})
        .tool("activate_skill", {"name": "pdf"})
        .events
    )
    ctx = context(events)

    assert grade({"type": "command_executed", "pattern": "pytest", "require_success": True}, ctx).score == 1
    assert grade({"type": "commands_efficiency", "tool": "Bash", "expected": 3}, ctx).score == 1
    assert grade({"type": "tool_used", "tool": "run_shell_command", "min": 3}, ctx).score == 1
    assert grade({"type": "tool_order", "first": "Bash", "then": "Edit"}, ctx).score == 1
    assert grade({"type": "skill_triggered", "skill": "pdf"}, ctx).score == 1
