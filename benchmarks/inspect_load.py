"""How fast ``load_runs`` reads an Inspect AI eval log, against Inspect's own ``read_eval_log``.

Run: ``python benchmarks/inspect_load.py [--samples 500] [--epochs 1] [--repeats 5]``. Writes a real
log with Inspect's ``eval`` and its mock model (each sample: a tool call, its result, an answer),
then prints the median time of ``read_eval_log`` (the floor: Inspect parsing its own log), of
``load_runs`` on the same file, per sample, and their ratio. Offline: every mock output carries its
usage, so no tokenizer is needed.
"""

from __future__ import annotations

import argparse
import re
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import Sample
from inspect_ai.log import read_eval_log
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import match
from inspect_ai.solver import generate, use_tools
from inspect_ai.tool import tool

from coder_eval.analysis import load_runs


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


def respond(messages: list[Any], tools: Any, tool_choice: Any, config: Any) -> ModelOutput:
    """Call ``add`` with the sample's numbers, then answer its result."""
    if messages[-1].role == "tool":
        out = ModelOutput.from_content(model="bench", content=messages[-1].text)
    else:
        x, y = (int(n) for n in re.findall(r"\d+", messages[0].text))
        out = ModelOutput.for_tool_call(model="bench", tool_name="add", tool_arguments={"x": x, "y": y})
    out.usage = ModelUsage(
        input_tokens=900, output_tokens=80, input_tokens_cache_read=2000, total_tokens=2980
    )
    return out


def write_log(folder: Path, samples: int, epochs: int) -> Path:
    dataset = [Sample(id=i, input=f"What is {i} + {i}?", target=str(2 * i)) for i in range(samples)]
    task = Task(name="bench", dataset=dataset, solver=[use_tools(add()), generate()], scorer=match())
    model = get_model("mockllm/bench", custom_outputs=respond)
    [log] = inspect_eval(task, model=model, epochs=epochs, log_dir=str(folder), display="none")
    return Path(log.location)


def median_s(action: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=500)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        log = write_log(Path(tmp), args.samples, args.epochs)
        n = args.samples * args.epochs
        assert len(load_runs(log).episodes) == n
        floor = median_s(lambda: read_eval_log(str(log), resolve_attachments="core"), args.repeats)
        ours = median_s(lambda: load_runs(log), args.repeats)
        size = log.stat().st_size / 1e6
        print(f"{n} samples ({size:.1f} MB .eval), median of {args.repeats}:")
        print(f"  read_eval_log  {floor:7.3f} s  ({1000 * floor / n:.2f} ms per sample)")
        print(f"  load_runs      {ours:7.3f} s  ({1000 * ours / n:.2f} ms per sample)")
        print(f"  ratio          {ours / floor:7.2f}x")


if __name__ == "__main__":
    main()
