"""Writes real Inspect AI eval logs with Inspect's own ``eval`` and its mock model, offline.

Run as a script (``python -m tests.interop.inspect_eval LOG_DIR``) so Inspect's state and the files
it keeps under the user's data directory stay out of the test process. Every model output carries
its usage, so the mock model never needs a tokenizer (none can be downloaded here).

The task adds two numbers with an ``add`` tool, over three mock models, two epochs each:

- ``mockllm/careful`` calls ``add`` and answers its result: every sample passes;
- ``mockllm/hasty`` answers at once: right on samples 1 and 2, wrong on 3, and its provider fails
  on sample 4 (a sample error: an invalid episode);
- ``mockllm/looper`` calls ``add`` again and again until the task's message limit stops it.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

SAMPLES = {1: (1, 2), 2: (2, 5), 3: (3, 4), 4: (4, 4)}
"""Sample id -> the two numbers to add."""
MODELS = ("mockllm/careful", "mockllm/hasty", "mockllm/looper")
EPOCHS = 2
MESSAGE_LIMIT = 6
USAGE = {
    "input_tokens": 100,
    "output_tokens": 10,
    "input_tokens_cache_read": 40,
    "input_tokens_cache_write": 5,
}
"""The usage of every model call."""
HASTY_ERROR = "provider unavailable"


def numbers(messages: list[Any]) -> tuple[int, int]:
    """The two numbers of the sample's question."""
    first, second = re.findall(r"\d+", next(m.text for m in messages if m.role == "user"))
    return int(first), int(second)


def respond(model: str) -> Any:
    """The mock model's behaviour: a function of the conversation so far."""
    from inspect_ai.model import ModelOutput, ModelUsage

    def output(messages: list[Any], tools: Any, tool_choice: Any, config: Any) -> ModelOutput:
        x, y = numbers(messages)
        name = model.split("/")[1]
        if name == "hasty" and x == 4:
            raise RuntimeError(HASTY_ERROR)
        if name == "hasty":
            out = ModelOutput.from_content(model=name, content=str(x + y + (x == 3)))
        elif name == "careful" and messages[-1].role == "tool":
            out = ModelOutput.from_content(model=name, content=messages[-1].text)
        else:
            out = ModelOutput.for_tool_call(model=name, tool_name="add", tool_arguments={"x": x, "y": y})
        out.usage = ModelUsage(**USAGE, total_tokens=sum(USAGE.values()))
        return out

    return output


def arith() -> Any:
    """The task: four additions, the ``add`` tool, exact-match scoring."""
    from inspect_ai import Task
    from inspect_ai.dataset import Sample
    from inspect_ai.scorer import match
    from inspect_ai.solver import generate, use_tools
    from inspect_ai.tool import tool

    @tool
    def add() -> Any:
        async def execute(x: int, y: int) -> int:
            """Add two numbers.

            Args:
                x: The first number.
                y: The second number.
            """
            return x + y

        return execute

    dataset = [Sample(id=i, input=f"What is {x} + {y}?", target=str(x + y)) for i, (x, y) in SAMPLES.items()]
    return Task(
        name="arith",
        dataset=dataset,
        solver=[use_tools(add()), generate()],
        scorer=match(),
        message_limit=MESSAGE_LIMIT,
    )


def main(log_dir: Path) -> None:
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import get_model

    models = [get_model(name, custom_outputs=respond(name)) for name in MODELS]
    logs = inspect_eval(
        arith(), model=models, epochs=EPOCHS, log_dir=str(log_dir), display="none", fail_on_error=False
    )
    for log in logs:
        print(log.location)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
