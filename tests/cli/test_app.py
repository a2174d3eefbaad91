"""The command line's plumbing, for every command: usage errors, help, --version, completion, metavars."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Annotated

import pytest
import typer
import typer.main

from coder_eval.cli.app import CommandGroup
from coder_eval.version import __version__
from tests.helpers import coder_eval


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["rnu"], "No such command 'rnu' (did you mean 'run'?)"),
        (["reprot", "runs/x"], "No such command 'reprot' (did you mean 'report'?)"),
        (["run", "--mdoel", "x"], "No such option: --mdoel"),
        (["run", "-j", "many"], "Invalid value for '-j' / '--jobs'"),
        (["run", "--min-pass-rate", "2"], "--min-pass-rate"),
        (["run", "--repeats", "0"], "Invalid value for '--repeats'"),
        (["run", "-j", "0"], "Invalid value for '-j' / '--jobs'"),
        (["run", "--max-cost-usd", "-1"], "Invalid value for '--max-cost-usd'"),
        (["run", "--sample", "0"], "Invalid value for '--sample'"),
        (["report"], "Missing argument 'RUN_DIR'"),
        (["show"], "Missing argument 'TARGET'"),
    ],
)
def test_usage_errors_exit_2_with_a_hint_and_no_traceback(
    tmp_path: Path, args: list[str], message: str
) -> None:
    result = coder_eval(*args, cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert message in result.stderr
    assert "Usage: coder-eval" in result.stderr and "-h' for help" in result.stderr
    assert "Traceback" not in result.stderr


def test_bare_command_prints_help(tmp_path: Path) -> None:
    result = coder_eval(cwd=tmp_path)
    assert result.returncode == 0
    assert "Usage: coder-eval [OPTIONS] COMMAND" in result.stdout
    assert all(name in result.stdout for name in ("run", "plan", "validate", "report", "show", "view"))


def test_version(tmp_path: Path) -> None:
    result = coder_eval("--version", cwd=tmp_path)
    assert (result.returncode, result.stdout.strip()) == (0, f"coder-eval {__version__}")


def complete(words: str, tmp_path: Path) -> list[str]:
    env = {
        **os.environ,
        "_CODER_EVAL_COMPLETE": "complete_bash",
        "COMP_WORDS": words,
        "COMP_CWORD": str(len(words.split()) - (0 if words.endswith(" ") else 1)),
    }
    result = subprocess.run(
        [sys.executable, "-m", "coder_eval"], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.split()


def test_shell_completion_offers_commands_and_options(tmp_path: Path) -> None:
    assert complete("coder-eval rep", tmp_path) == ["report", "replay"]
    assert "--template" in complete("coder-eval report --te", tmp_path)
    # the script --install-completion writes (asked for directly: shell detection needs a parent shell)
    env = {**os.environ, "_CODER_EVAL_COMPLETE": "source_bash"}
    script = subprocess.run(
        [sys.executable, "-m", "coder_eval"], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert script.returncode == 0 and "_CODER_EVAL_COMPLETE=complete_bash" in script.stdout, script.stderr
    assert "--install-completion" in coder_eval("-h", cwd=tmp_path).stdout


def test_help_shows_readable_metavars(tmp_path: Path) -> None:
    text = coder_eval("run", "-h", cwd=tmp_path).stdout
    for option, metavar in [
        ("--jobs", "N"),
        ("--define", "PATH=VALUE"),
        ("--model", "MODEL"),
        ("--min-pass-rate", "X"),
        ("--run-dir", "DIR"),
        ("--experiment", "FILE"),
    ]:
        assert any(option in line and f" {metavar} " in line for line in text.splitlines()), option
    assert "<bool>" not in text and "<str>" not in text and "<list[str]>" not in text


def test_metavars_apply_to_any_command_on_the_group() -> None:
    app = typer.Typer(cls=CommandGroup)

    @app.command()
    def later(
        run_dirs: Annotated[list[Path], typer.Argument()],
        top: Annotated[int, typer.Option()] = 1,
        share: Annotated[float, typer.Option()] = 0.5,
        out_dir: Annotated[Path | None, typer.Option()] = None,
        label: Annotated[str, typer.Option()] = "",
        tags: Annotated[list[str] | None, typer.Option()] = None,
        dry_run: Annotated[bool, typer.Option()] = False,
    ) -> None:
        """A command another module adds later."""

    @app.command()
    def other() -> None:
        """A second command, so the group keeps both."""

    command = typer.main.get_command(app).commands["later"]  # type: ignore[attr-defined]
    metavars = {p.name: p.metavar for p in command.params}
    assert metavars.pop("run_dirs") in ("RUN_DIR", "RUN_DIR...")  # newer typer adds the dots itself
    assert metavars == {
        "top": "N",
        "share": "X",
        "out_dir": "DIR",
        "label": "LABEL",
        "tags": "TAG",
        "dry_run": "",
    }
