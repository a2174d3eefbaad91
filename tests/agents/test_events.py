from coder_eval.agents.events import Steps
from coder_eval.trajectory import Message, ToolCall, ToolResult, Usage


class Sink:
    def __init__(self) -> None:
        self.events: list[object] = []

    def write(self, event: object) -> None:
        self.events.append(event)


def test_a_step_is_its_message_then_calls_then_results() -> None:
    sink = Sink()
    steps = Steps(sink, model="m")
    steps.text("Let me look.")
    steps.call("c1", "bash", {"command": "ls"})
    steps.result("c1", "a.py", exit_code=0)
    steps.text("Done.")
    steps.finish(Usage(input_tokens=10, output_tokens=2))

    kinds = [type(e).__name__ for e in sink.events]
    assert kinds == ["Message", "ToolCall", "ToolResult", "Message"]
    first, last = sink.events[0], sink.events[-1]
    assert isinstance(first, Message) and first.content[1]["name"] == "bash" and first.usage is None
    assert isinstance(last, Message) and last.usage == Usage(input_tokens=10, output_tokens=2)
    assert (steps.turns, steps.final_text, steps.usage.total) == (2, "Done.", 12)


def test_end_step_puts_each_responses_usage_on_its_message_and_deltas_join() -> None:
    sink = Sink()
    steps = Steps(sink)
    steps.text("Hel")
    steps.text("lo", append=True)
    steps.end_step(Usage(output_tokens=3))
    steps.call("c2", "read", {})
    steps.result("c2", "x" * 30_000, is_error=True)
    steps.end_step(Usage(output_tokens=4))

    messages = [e for e in sink.events if isinstance(e, Message)]
    result = next(e for e in sink.events if isinstance(e, ToolResult))
    assert messages[0].content == [{"type": "text", "text": "Hello"}]
    assert [m.usage.output_tokens for m in messages if m.usage] == [3, 4]
    assert (result.is_error, result.output_chars, len(result.output)) == (True, 30_000, 20_000)
    assert sum(isinstance(e, ToolCall) for e in sink.events) == 1
