"""What coder_eval adds to each agent CLI's run: the same scripted task, bare and through the runner.

Run: ``python benchmarks/agent_overhead.py [--runs 5] [--agents codex opencode gemini claude-code]
[--driver tempdir]``.
For each agent the bare run starts the real CLI with ``subprocess`` against the scripted model
server, in a fresh directory whose config was written beforehand (not timed); the coder_eval run
is ``run_episode`` on a task with the same script (sandbox, config, launcher, event recording,
trajectory and grading included). Bare and coder_eval runs alternate, so drift on a shared machine
hits both. Prints, per agent, the median wall time of each, their ratio, and the median time a
coder_eval episode spends outside its agent phase (sandbox set-up and removal, grading).

Claude Code is also run bare in the mode claude-agent-sdk always starts it in (``--input-format
stream-json``: an ``initialize`` request, then the prompt as a user message on stdin, stdin closed at
the result), which the bare ``-p`` run does not pay; the line ``claude-code (SDK mode)`` sets
coder_eval against that run, so what the SDK's protocol costs the CLI and what coder_eval adds are
told apart. On a shared machine the median of a few runs moves by several percent from one
invocation to the next, so each line also gives the median of the runs' paired ratios (coder_eval's
run over the bare run just before it) with a 95 % percentile-bootstrap interval: a goal such as
1.05× is met only where the interval lies below it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import yaml
from scipy import stats

from coder_eval.agents.base import ModelEndpoint
from coder_eval.agents.claude_code.launcher import bundled_cli
from coder_eval.agents.codex.agent import codex_binary
from coder_eval.agents.codex.home import CodexHome
from coder_eval.agents.codex.spec import CodexSpec
from coder_eval.agents.gemini.agent import gemini_script
from coder_eval.agents.gemini.home import GeminiHome
from coder_eval.agents.gemini.spec import GeminiSpec
from coder_eval.agents.opencode.agent import opencode_binary
from coder_eval.agents.opencode.home import OpenCodeConfig
from coder_eval.agents.opencode.spec import OpenCodeSpec
from coder_eval.episode.plan import EpisodePlan
from coder_eval.episode.runner import run_episode
from coder_eval.sandbox import Provision
from coder_eval.sandbox.base import Sandbox
from coder_eval.sandbox.tempdir import TempdirSandbox, TempdirSpec
from coder_eval.scripted import ScriptedServer, load_script
from coder_eval.task import load_tasks

PROMPT = "Make notes.txt say goodbye."
MODELS = {
    "claude-code": "claude-sonnet-4-5",
    "codex": "gpt-5.1-codex",
    "opencode": "claude-sonnet-4-5",
    "gemini": "gemini-2.5-pro",
}


def script(model: str) -> dict[str, Any]:
    """Four tool turns, named as Claude Code names them; the server rewrites them for each CLI."""
    edit = {"file_path": "notes.txt", "old_string": "hello", "new_string": "goodbye"}
    return {
        "model": model,
        "final_text": "Done.",
        "turns": [
            {"blocks": [{"text": "Looking."}, {"tool_use": {"name": "Bash", "input": {"command": "ls -a"}}}]},
            {
                "blocks": [
                    {"tool_use": {"name": "Write", "input": {"file_path": "notes.txt", "content": "hello\n"}}}
                ]
            },
            {"blocks": [{"tool_use": {"name": "Read", "input": {"file_path": "notes.txt"}}}]},
            {"blocks": [{"tool_use": {"name": "Edit", "input": edit}}]},
        ],
    }


Launched = tuple[list[str], dict[str, str], str | None]
Launch = Callable[[Sandbox, ModelEndpoint], Coroutine[Any, Any, Launched]]
"""(sandbox, endpoint) -> (argv, extra env, stdin) of a bare run; writes the CLI's config into the
sandbox's HOME through its verbs, as the agents do (the bare CLI then runs there without coder_eval)."""


async def claude_launch(sandbox: Sandbox, endpoint: ModelEndpoint) -> Launched:
    argv = [str(bundled_cli()), "-p", PROMPT, "--output-format", "stream-json", "--verbose"]
    argv += [
        "--model",
        MODELS["claude-code"],
        "--permission-mode",
        "bypassPermissions",
        "--setting-sources",
        "",
    ]
    env = {"IS_SANDBOX": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", **endpoint.env()}
    return argv, env, None


async def codex_launch(sandbox: Sandbox, endpoint: ModelEndpoint) -> Launched:
    codex = codex_binary()
    assert codex is not None
    codex_home = CodexHome(f"{sandbox.env['HOME']}/.codex")
    await codex_home.write(
        sandbox,
        CodexSpec(),
        codex=codex,
        model=MODELS["codex"],
        endpoint=endpoint,
        instructions=None,
        skills=[],
    )
    argv = [
        str(codex),
        "exec",
        "--json",
        "--skip-git-repo-check",
        "--dangerously-bypass-approvals-and-sandbox",
    ]
    return [*argv, "--model", MODELS["codex"], PROMPT], codex_home.env(endpoint), None


async def opencode_launch(sandbox: Sandbox, endpoint: ModelEndpoint) -> Launched:
    home = Path(sandbox.env["HOME"])
    config = OpenCodeConfig(f"{home}/.config/opencode")
    model = await config.write(
        sandbox,
        OpenCodeSpec(),
        model=MODELS["opencode"],
        endpoint=endpoint,
        instructions=None,
        skill_paths=[],
    )
    argv = [str(opencode_binary()), "run", "--format", "json", "--title", "bench", "--model", str(model)]
    xdg = {"XDG_CONFIG_HOME": str(home / ".config"), "XDG_DATA_HOME": str(home / ".local/share")}
    xdg |= {"XDG_CACHE_HOME": str(home / ".cache"), "XDG_STATE_HOME": str(home / ".local/state")}
    return argv, {**config.env(), **xdg}, PROMPT


async def gemini_launch(sandbox: Sandbox, endpoint: ModelEndpoint) -> Launched:
    settings = GeminiHome(f"{sandbox.env['HOME']}/.gemini")
    await settings.write(sandbox, GeminiSpec(), max_turns=None, instructions=None, skills=[])
    node = shutil.which("node")
    argv = [str(node), str(gemini_script()), "-p", PROMPT, "-o", "stream-json", "--skip-trust", "--yolo"]
    return [*argv, "-m", MODELS["gemini"]], settings.env(endpoint), None


LAUNCHES: dict[str, Launch] = {
    "claude-code": claude_launch,
    "codex": codex_launch,
    "opencode": opencode_launch,
    "gemini": gemini_launch,
}
FOUND: dict[str, Callable[[], Any]] = {
    "claude-code": bundled_cli,
    "codex": codex_binary,
    "opencode": opencode_binary,
    "gemini": gemini_script,
}


def bare_run(kind: str, stream: bool = False) -> float:
    """Seconds for one bare CLI run in a fresh directory with a fresh HOME (config not timed); with
    ``stream`` (Claude Code), in claude-agent-sdk's stream-json mode, driven without the SDK."""
    with ScriptedServer(load_script(script(MODELS[kind])), seed=1) as server:
        sandbox = asyncio.run(TempdirSandbox.create(TempdirSpec(), Provision()))
        try:
            return _timed_bare_run(kind, sandbox, ModelEndpoint(server.base_url), stream)
        finally:
            asyncio.run(sandbox.close())


def _timed_bare_run(kind: str, sandbox: TempdirSandbox, endpoint: ModelEndpoint, stream: bool) -> float:
    work, home = Path(sandbox.workdir), Path(sandbox.env["HOME"])
    argv, extra, stdin = asyncio.run(LAUNCHES[kind](sandbox, endpoint))
    env = {"PATH": os.environ["PATH"], "HOME": str(home), "TMPDIR": sandbox.env["TMPDIR"], **extra}
    if stream:
        argv = [a for a in argv if a not in ("-p", PROMPT)] + ["--input-format", "stream-json"]
    started = time.perf_counter()
    if stream:
        _streamed(argv, work, env)
    else:
        subprocess.run(
            argv, cwd=work, env=env, input=stdin, capture_output=True, text=True, timeout=300, check=True
        )
    elapsed = time.perf_counter() - started
    notes = work / "notes.txt"
    if not notes.exists() or "goodbye" not in notes.read_text():
        mode = " in stream-json mode" if stream else ""
        raise RuntimeError(f"the bare {kind} run{mode} did not edit notes.txt")
    return elapsed


def _streamed(argv: list[str], work: Path, env: dict[str, str]) -> None:
    """Claude Code as claude-agent-sdk drives it: an ``initialize`` request and the prompt as a user
    message on stdin, stdin closed at the result."""
    initialize = {"type": "control_request", "request_id": "req_1", "request": {"subtype": "initialize"}}
    message = {"role": "user", "content": PROMPT}
    user = {"type": "user", "message": message, "parent_tool_use_id": None, "session_id": "default"}
    pipe, quiet = subprocess.PIPE, subprocess.DEVNULL
    with subprocess.Popen(argv, cwd=work, env=env, text=True, stdin=pipe, stdout=pipe, stderr=quiet) as cli:
        assert cli.stdin is not None and cli.stdout is not None
        cli.stdin.write(f"{json.dumps(initialize)}\n{json.dumps(user)}\n")
        cli.stdin.flush()
        for line in cli.stdout:
            if json.loads(line).get("type") == "result":
                cli.stdin.close()
        cli.wait(timeout=300)


def coder_eval_run(kind: str, folder: Path, index: int, driver: str = "auto") -> tuple[float, float]:
    """Seconds for one ``run_episode`` of the same script, grading included, and the part of them
    spent outside the agent phase (sandbox set-up and removal, grading)."""
    task = {
        "task_id": f"overhead-{kind}",
        "initial_prompt": PROMPT,
        "agent": {"kind": kind, "model": "scripted", "permission_mode": "bypassPermissions"},
        "scripted": script(MODELS[kind]),
        "sandbox": {"driver": driver},
        "success_criteria": [{"type": "file_contains", "path": "notes.txt", "includes": ["goodbye"]}],
    }
    path = folder / f"{kind}.yaml"
    path.write_text(yaml.safe_dump(task), encoding="utf-8")
    plan = EpisodePlan(load_tasks([path])[0], repeat=index)
    started = time.perf_counter()
    end = asyncio.run(run_episode(plan, "bench", folder / f"{kind}-{index}.jsonl"))
    elapsed = time.perf_counter() - started
    if end.outcome != "pass":
        raise RuntimeError(f"the coder_eval {kind} run did not pass: {end.status} {end.error}")
    return elapsed, end.timings.total_s - end.timings.agent_s


class Measured(NamedTuple):
    bare: list[float]
    ours: list[float]
    outside: list[float]
    stream: list[float]
    """Claude Code bare in the SDK's stream-json mode (empty for the other agents)."""


def measure(kind: str, runs: int, folder: Path, driver: str = "auto") -> Measured:
    """``runs`` bare and ``runs`` coder_eval runs (and for Claude Code ``runs`` bare runs in the SDK's
    mode), alternating, after one warm-up of each."""
    streamed = kind == "claude-code"
    bare_run(kind)
    coder_eval_run(kind, folder, -1, driver)
    if streamed:
        bare_run(kind, stream=True)
    found = Measured([], [], [], [])
    for index in range(runs):
        found.bare.append(bare_run(kind))
        if streamed:
            found.stream.append(bare_run(kind, stream=True))
        elapsed, around = coder_eval_run(kind, folder, index, driver)
        found.ours.append(elapsed)
        found.outside.append(around)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="runs of each kind per agent (default 5)")
    parser.add_argument("--agents", nargs="+", default=list(LAUNCHES), choices=list(LAUNCHES))
    parser.add_argument("--driver", default="auto", help="the coder_eval runs' sandbox driver (default auto)")
    args = parser.parse_args()
    print(f"runs each: {args.runs}")
    header = (
        "agent",
        "bare median",
        "coder_eval median",
        "ratio",
        "added",
        "outside agent",
        "paired [95% CI]",
    )
    print("{:<22} {:>12} {:>18} {:>7} {:>9} {:>14}  {}".format(*header))
    with tempfile.TemporaryDirectory() as folder:
        for kind in args.agents:
            if FOUND[kind]() is None:
                print(f"{kind:<22} not installed (make setup)")
                continue
            found = measure(kind, args.runs, Path(folder), args.driver)
            o, around = statistics.median(found.ours), statistics.median(found.outside)
            lines = [(kind, found.bare)] + ([(f"{kind} (SDK mode)", found.stream)] if found.stream else [])
            for name, bare in lines:
                b = statistics.median(bare)
                print(
                    f"{name:<22} {b:>10.3f} s {o:>16.3f} s {o / b:>6.2f}x {o - b:>+8.3f} s {around:>12.3f} s"
                    f"  {paired(found.ours, bare)}"
                )


def paired(ours: list[float], bare: list[float]) -> str:
    """The median of the paired ratios and its 95 % percentile-bootstrap interval (scipy).

    Example: ``paired([1.04, 1.1], [1.0, 1.0])`` -> ``"1.07x [1.04, 1.10]"``.
    """
    ratios = np.array(ours) / np.array(bare)
    if len(ratios) < 2:
        return f"{float(np.median(ratios)):.2f}x"
    found = stats.bootstrap((ratios,), np.median, method="percentile", random_state=0)
    low, high = found.confidence_interval
    return f"{float(np.median(ratios)):.2f}x [{low:.2f}, {high:.2f}]"


if __name__ == "__main__":
    main()
