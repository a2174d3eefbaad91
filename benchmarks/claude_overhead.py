"""What coder_eval adds to a Claude Code run: the same scripted task, bare and through the runner.

Run: ``python benchmarks/claude_overhead.py [--runs 5]``. The bare run is ``claude -p`` (the CLI
bundled with claude-agent-sdk) against the scripted model server, started with ``subprocess``; the
coder_eval run is ``run_episode`` on a task with the same script (sandbox, SDK, launcher, trajectory
and grading included). Prints the median wall time of each and their ratio.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

import yaml

from coder_eval.agents.claude_code.launcher import bundled_cli
from coder_eval.episode.plan import EpisodePlan
from coder_eval.episode.runner import run_episode
from coder_eval.scripted import ScriptedServer, load_script
from coder_eval.task import load_tasks

PROMPT = "Make notes.txt say goodbye."
SCRIPT: dict[str, Any] = {
    "model": "claude-sonnet-4-5",
    "final_text": "Done.",
    "turns": [
        {"blocks": [{"text": "Looking."}, {"tool_use": {"name": "Bash", "input": {"command": "ls -a"}}}]},
        {
            "blocks": [
                {"tool_use": {"name": "Write", "input": {"file_path": "notes.txt", "content": "hello\n"}}}
            ]
        },
        {"blocks": [{"tool_use": {"name": "Read", "input": {"file_path": "notes.txt"}}}]},
        {
            "blocks": [
                {
                    "tool_use": {
                        "name": "Edit",
                        "input": {"file_path": "notes.txt", "old_string": "hello", "new_string": "goodbye"},
                    }
                }
            ]
        },
    ],
}


def bare_run(cli: Path) -> float:
    """Seconds for one ``claude -p`` run in a fresh directory with a fresh HOME."""
    with tempfile.TemporaryDirectory() as base, ScriptedServer(load_script(SCRIPT), seed=1) as server:
        work, home = Path(base, "work"), Path(base, "home")
        work.mkdir()
        home.mkdir()
        env = {"PATH": os.environ["PATH"], "HOME": str(home), "IS_SANDBOX": "1", **server.client_env()}
        argv = [
            str(cli),
            "-p",
            PROMPT,
            "--output-format",
            "stream-json",
            "--verbose",
            "--model",
            "claude-sonnet-4-5",
        ]
        argv += ["--permission-mode", "bypassPermissions", "--setting-sources", ""]
        started = time.perf_counter()
        subprocess.run(argv, cwd=work, env=env, capture_output=True, check=True, timeout=120)
        elapsed = time.perf_counter() - started
        notes = work / "notes.txt"
        if not notes.exists() or "goodbye" not in notes.read_text():
            raise RuntimeError("the bare run did not edit notes.txt")
    return elapsed


def coder_eval_run(folder: Path, index: int) -> float:
    """Seconds for one ``run_episode`` of the same script, grading included."""
    task = {
        "task_id": "overhead",
        "initial_prompt": PROMPT,
        "agent": {"kind": "claude-code", "model": "scripted"},
        "scripted": SCRIPT,
        "success_criteria": [{"type": "file_contains", "path": "notes.txt", "includes": ["goodbye"]}],
    }
    path = folder / "task.yaml"
    path.write_text(yaml.safe_dump(task), encoding="utf-8")
    plan = EpisodePlan(load_tasks([path])[0], repeat=index)
    started = time.perf_counter()
    end = asyncio.run(run_episode(plan, "bench", folder / f"episode-{index}.jsonl"))
    elapsed = time.perf_counter() - started
    if end.outcome != "pass":
        raise RuntimeError(f"the coder_eval run did not pass: {end.status} {end.error}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="runs of each kind (default 5)")
    args = parser.parse_args()
    cli = bundled_cli()
    if cli is None:
        raise SystemExit("Claude Code CLI not found")
    with tempfile.TemporaryDirectory() as folder:
        coder_eval_run(Path(folder), -1)  # warm-up: imports and the first CLI start
        bare = [bare_run(cli) for _ in range(args.runs)]
        ours = [coder_eval_run(Path(folder), i) for i in range(args.runs)]
    bare_median, ours_median = statistics.median(bare), statistics.median(ours)
    print(
        textwrap.dedent(
            f"""
            runs each:               {args.runs}
            bare claude -p:          median {bare_median:.3f} s  (min {min(bare):.3f}, max {max(bare):.3f})
            coder_eval run_episode:  median {ours_median:.3f} s  (min {min(ours):.3f}, max {max(ours):.3f})
            ratio:                   {ours_median / bare_median:.2f}x  (+{ours_median - bare_median:.3f} s)
            """
        ).strip()
    )


if __name__ == "__main__":
    main()
