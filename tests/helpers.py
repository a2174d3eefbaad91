"""Shared builders for the tests: task files, runs, and the CLI as a subprocess (``view`` too)."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from tests import cli_fork

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
    """Run the ``coder-eval`` CLI in a process of its own, as a user would (``env``: instead of this
    one's; ``columns``: the terminal's width). The process is forked from one that has imported
    coder_eval already where it can be (``tests/cli_fork.py``), else a fresh interpreter."""
    env = {**(os.environ if env is None else env), "COLUMNS": str(columns), "NO_COLOR": "1"}
    forked = cli_fork.run(args, cwd, env, timeout)
    if forked is not None:
        return forked
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
    """A scripted episode's served tokens at list price, from the note that says its cost is $0."""
    import re

    found = [re.search(r"its tokens at list price: \$(\d+\.\d+)", note) for note in notes]
    return next((float(m.group(1)) for m in found if m), None)


VIEW_START_S = 90


@dataclass
class Served:
    """A running ``coder-eval view``: the URL it printed, split into its base and its token."""

    process: subprocess.Popen[str]
    url: str

    @property
    def base(self) -> str:
        return self.url.partition("?")[0]

    @property
    def token(self) -> str:
        return self.url.partition("?token=")[2]


@contextlib.contextmanager
def served_view(args: list[str], cwd: Path) -> Iterator[Served]:
    """``coder-eval view ARGS --no-browser`` in a subprocess until the block ends; yields it once it
    printed its URL (its log in ``cwd/view.log``)."""
    env = {**os.environ, "JUPYTER_DATA_DIR": str(cwd / "data"), "JUPYTER_RUNTIME_DIR": str(cwd / "rt")}
    server = subprocess.Popen(
        [sys.executable, "-m", "coder_eval", "view", *args, "--no-browser"],
        cwd=cwd,
        env={**env, "PYTHONUNBUFFERED": "1", "NO_COLOR": "1"},
        stdout=subprocess.PIPE,
        stderr=(cwd / "view.log").open("w"),
        text=True,
    )
    try:
        yield Served(server, _printed_url(server, cwd))
    finally:
        server.terminate()
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(timeout=10)


def _printed_url(server: subprocess.Popen[str], cwd: Path) -> str:
    assert server.stdout is not None
    deadline = time.monotonic() + VIEW_START_S
    while time.monotonic() < deadline:
        line = server.stdout.readline()
        if line.startswith("explorer: "):
            return line.removeprefix("explorer: ").strip()
        if not line and server.poll() is not None:
            break
    raise RuntimeError(f"coder-eval view printed no URL: {(cwd / 'view.log').read_text()[-2000:]}")
