"""Shared builders for the tests: task files, runs, and the CLI as a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Mapping
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "tasks" / "examples"


def write_task(folder: Path, body: str, name: str = "task.yaml") -> Path:
    """Write a task file (dedented) into ``folder`` and return its path."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(textwrap.dedent(body).lstrip(), encoding="utf-8")
    return path


MINIMAL = """
task_id: {task_id}
initial_prompt: write ok to ok.txt
reference_solution: echo ok > ok.txt
success_criteria:
  - type: file_contains
    path: ok.txt
    includes: [ok]
"""


def minimal_task(folder: Path, task_id: str = "t1", extra: str = "") -> Path:
    """A valid task that the oracle passes and the none agent fails."""
    return write_task(folder, MINIMAL.format(task_id=task_id) + textwrap.dedent(extra), f"{task_id}.yaml")


WAITS_FOR_A_FLAG = """
task_id: {task_id}
initial_prompt: write ok to ok.txt
agent: {{kind: command, command: "while [ ! -e {flag} ]; do sleep 0.1; done; echo ok > ok.txt"}}
sandbox: {{driver: tempdir}}
success_criteria:
  - {{type: file_contains, path: ok.txt, includes: [ok]}}
"""


def flagged_task(folder: Path, task_id: str, flag: Path) -> Path:
    """A task whose agent waits until ``flag`` exists on the host, then passes (``tempdir`` sees it)."""
    return write_task(folder, WAITS_FOR_A_FLAG.format(task_id=task_id, flag=flag), f"{task_id}.yaml")


def coder_eval(
    *args: str, cwd: Path, timeout: float = 300, env: Mapping[str, str] | None = None, columns: int = 200
) -> subprocess.CompletedProcess[str]:
    """Run the ``coder-eval`` CLI in a subprocess, as a user would (``env``: instead of this one's;
    ``columns``: the terminal's width)."""
    env = {**(os.environ if env is None else env), "COLUMNS": str(columns), "NO_COLOR": "1"}
    return subprocess.run(
        [sys.executable, "-m", "coder_eval", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def scripted_list_price(notes: list[str]) -> float | None:
    """What the agent priced a scripted episode's tokens at, from the note that says its cost is $0."""
    import re

    found = [re.search(r"agent priced its tokens at \$(\d+\.\d+)", note) for note in notes]
    return next((float(m.group(1)) for m in found if m), None)
