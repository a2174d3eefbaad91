"""The root group imports a command's module only when that command is used: ``--version`` and ``-h``
load none of the runner, the agents, the criteria, the judge SDK or the analysis stack (a behaviour
test: the modules in ``sys.modules`` afterwards; ``benchmarks/cli_startup.py`` measures the time)."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest
import typer.main

from coder_eval.cli import app
from coder_eval.cli.commands import COMMANDS

HEAVY = [
    "coder_eval.episode.runner",
    "coder_eval.agents",
    "coder_eval.criteria",
    "coder_eval.task",
    "coder_eval.cli.run",
    "coder_eval.cli.plan",
    "pydantic",
    "pandas",
    "claude_agent_sdk",
    "anthropic",
]
"""Modules a bare start must not import (each costs tens to hundreds of milliseconds)."""


def imported_after(*args: str, cwd: Path, heavy: list[str] = HEAVY) -> tuple[str, list[str]]:
    """What ``coder-eval ARGS`` printed, and which of ``heavy`` it had imported when it exited."""
    code = (
        "import json, sys\n"
        "from coder_eval.cli import main\n"
        "try:\n"
        "    main(sys.argv[1:])\n"
        "except SystemExit:\n"
        "    pass\n"
        f"print(json.dumps([m for m in {heavy!r} if m in sys.modules]))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code, *args], cwd=cwd, capture_output=True, text=True, timeout=120, check=True
    )
    *printed, loaded = result.stdout.strip().splitlines()
    return "\n".join(printed), json.loads(loaded)


@pytest.mark.parametrize("args", [["--version"], ["-h"], []])
def test_version_and_help_import_no_command_module(tmp_path: Path, args: list[str]) -> None:
    printed, loaded = imported_after(*args, cwd=tmp_path)
    assert loaded == []
    assert "coder-eval" in printed


def test_root_help_lists_every_command_with_its_summary(tmp_path: Path) -> None:
    printed, _ = imported_after("-h", cwd=tmp_path)
    flat = " ".join(printed.replace("│", " ").split())
    for name, row in COMMANDS.items():
        assert f"{name} {row.summary.split()[0]}" in flat, name


@pytest.mark.parametrize("command", ["show", "view", "report", "regrade", "export"])
def test_a_command_help_imports_only_what_its_options_need(tmp_path: Path, command: str) -> None:
    heavy = [
        "coder_eval.episode.runner",
        "coder_eval.run_dir",
        "coder_eval.trajectory",
        "coder_eval.run.render",
    ]
    heavy += [m for m in HEAVY if m != "pydantic"]  # typer imports it to build a command's parameters
    printed, loaded = imported_after(command, "-h", cwd=tmp_path, heavy=heavy)
    assert loaded == []
    assert f"Usage: coder-eval {command}" in printed


def test_a_command_loads_its_module_when_used(tmp_path: Path) -> None:
    printed, loaded = imported_after("run", "-h", cwd=tmp_path)
    assert "coder_eval.cli.run" in loaded  # and, its options being typed, pydantic
    assert "coder_eval.episode.runner" not in loaded  # the run session is imported when it runs
    assert "--max-cost-usd" in printed


STATISTICS = ["scipy", "statsmodels", "coder_eval.analysis.stats", "coder_eval.analysis.answer"]
"""The statistics stack: SciPy alone took 1.3 s of every run's start when the store imported it."""
FRAMES = ["pandas", "numpy", "coder_eval.analysis.frames.load"]
"""The frames: pandas took a quarter of a trivial run's time when the store built frames to index it."""
UNUSED = ["httpx", "regex", "coder_eval.scripted.server"]
"""What a run whose agent needs no model and whose criteria match no pattern never uses: the API
proxy's client, the pattern matcher, the scripted model server."""


def test_a_run_without_reports_or_gates_imports_nothing_it_does_not_use(tmp_path: Path) -> None:
    from tests.helpers import minimal_task

    minimal_task(tmp_path / "tasks", "t1", "agent: {kind: oracle}\nsandbox: {driver: tempdir}\n")
    printed, loaded = imported_after(
        "run", "tasks", "--no-report", cwd=tmp_path, heavy=[*STATISTICS, *FRAMES, *UNUSED]
    )
    assert "pass 1" in printed
    assert len(list((tmp_path / "runs" / "latest" / "episodes").glob("*.jsonl"))) == 1
    assert (tmp_path / "runs" / "history.duckdb").is_file()  # indexed into the store all the same
    assert loaded == []


def test_a_plan_with_no_earlier_run_imports_no_statistics(tmp_path: Path) -> None:
    """``plan`` forecasts spend only from earlier runs of the same tasks; with none it says so, and
    never imports SciPy (half of its time)."""
    from tests.helpers import minimal_task

    minimal_task(tmp_path / "tasks", "t1", "agent: {kind: oracle}\nsandbox: {driver: tempdir}\n")
    heavy = ["scipy", "statsmodels", "pandas", "coder_eval.analysis.stats.forecast"]
    printed, loaded = imported_after("plan", "tasks", cwd=tmp_path, heavy=heavy)
    assert "forecast: no earlier run of these tasks in runs" in " ".join(printed.split())
    assert loaded == []


def test_each_row_names_the_module_that_defines_the_command_and_its_summary() -> None:
    for row in COMMANDS.values():
        importlib.import_module(row.module)
    built = typer.main.get_command(app)
    assert set(built.commands) == set(COMMANDS)  # type: ignore[attr-defined]
    for name, row in COMMANDS.items():
        command = built.commands[name]  # type: ignore[attr-defined]
        assert command.callback.__module__ == row.module, name
        assert (command.help or "").split("\n\n")[0].replace("\n", " ").strip() == row.summary, name


def test_an_unknown_command_still_gets_a_did_you_mean(tmp_path: Path) -> None:
    from tests.helpers import coder_eval

    result = coder_eval("shwo", cwd=tmp_path)
    assert result.returncode == 2
    assert "did you mean 'show'" in result.stderr
