"""The typer app, its two consoles, and the one place errors become exit codes.

Both consoles write what their stream's encoding can hold: under a non-UTF-8 locale the harness's
symbols print in ASCII and any other character as an escape (``coder_eval.terminal.ascii_fallback``).

Usage errors (an unknown command or option, a bad value, a missing argument) exit 2 with the usage
line, a hint and no traceback, whichever click the installed typer uses (typer vendors its own since
0.2x): the exception classes are taken from the module that defines ``typer.BadParameter``.

The root group lists every command of ``coder_eval.cli.commands`` and imports a command's module
only when that command is resolved (run, completed, or asked for its own help): the root's help shows
each command's summary from that table.

Every command registered with ``@app.command()`` gets readable metavars (``-j N``, ``--model MODEL``,
``RUN_DIR...``) without declaring them; ``METAVARS`` names the few that a type cannot say.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Annotated, Any, get_args

import typer
import typer.main
from rich.console import Console
from rich.markup import escape
from rich.table import Column
from typer.core import TyperCommand, TyperGroup

from coder_eval.cli.commands import COMMANDS
from coder_eval.errors import (
    CoderEvalError,
    ExecutorLost,
    ExitCode,
    InputError,
    ReportError,
    RunWriteError,
    did_you_mean,
)
from coder_eval.terminal import ascii_fallback, inert
from coder_eval.version import __version__

PROG = "coder-eval"
console = Console(stderr=True)
"""Progress, warnings and errors."""
out = Console()
"""Results: tables and paths."""

INPUT_ERRORS = (InputError, ReportError)
"""Errors that mean the input was wrong (exit 2); any other CoderEvalError exits 1."""

METAVARS = {"define": "PATH=VALUE", "param": "KEY=VALUE", "experiment": "FILE"}
"""Metavars by parameter name, for values whose type alone does not say what to write."""

_click = importlib.import_module(typer.BadParameter.__module__)
"""The click exceptions module typer raises from (``click.exceptions`` or typer's vendored copy)."""


class CommandGroup(TyperGroup):
    """The root group: did-you-mean for unknown commands, readable metavars on every command."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for command in [self, *self.commands.values()]:
            for param in command.params:
                readable_metavar(param)
            command.get_help_option = _flag_help_option(command.get_help_option)  # type: ignore[method-assign]

    def get_params(self, ctx: Any) -> list[Any]:
        params: list[Any] = super().get_params(ctx)
        for param in params:  # typer appends the completion options after __init__
            readable_metavar(param)
        return params

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        name = args[0] if args else ""
        if name and not name.startswith("-") and self.get_command(ctx, name) is None:
            ctx.fail(f"No such command {name!r}{did_you_mean(name, self.list_commands(ctx))}.")
        return super().resolve_command(ctx, args)


class RootGroup(CommandGroup):
    """``coder-eval`` itself: the commands of ``COMMANDS``, each module imported on first use."""

    def list_commands(self, ctx: Any) -> list[str]:
        return list(dict.fromkeys([*COMMANDS, *self.commands]))

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        command = self.commands.get(cmd_name)
        if command is None and cmd_name in COMMANDS:  # for the root's help: the summary alone
            return TyperCommand(cmd_name, help=COMMANDS[cmd_name].summary)
        return command

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        if args:
            self.load(args[0])
        return super().resolve_command(ctx, args)

    def load(self, name: str) -> None:
        """Import the module of command ``name`` (a no-op for a loaded or unknown name)."""
        if name in self.commands or name not in COMMANDS:
            return
        importlib.import_module(COMMANDS[name].module)  # registers its commands on `app`
        built = typer.main.get_command(app)
        assert isinstance(built, TyperGroup)
        self.commands[name] = built.commands[name]


def _flag_help_option(make: Any) -> Any:
    """``make`` (a command's ``get_help_option``) with a help flag that shows no value type."""

    def help_option(ctx: Any) -> Any:
        option = make(ctx)
        if option is not None:
            option.metavar = ""
        return option

    return help_option


def value_type(param: Any) -> type | None:
    """The Python type of one value of a click parameter (``list[Path]`` -> ``Path``), across typer
    versions: newer ones keep the annotation, older ones a click ``ParamType``."""
    descriptor = getattr(param, "type_descriptor", None)
    if descriptor is not None:
        annotation = descriptor.annotation
        inner = get_args(annotation)
        return inner[0] if inner else annotation  # type: ignore[no-any-return]
    names = {"integer": int, "integer range": int, "float": float, "float range": float}
    names |= {"path": Path, "text": str, "boolean": bool}
    return names.get(getattr(getattr(param, "type", None), "name", ""))


def readable_metavar(param: Any) -> None:
    """Give ``param`` a metavar a person reads (``N``, ``X``, ``DIR``, ``MODEL``) unless it has one."""
    if param.metavar is not None:
        return
    kind = value_type(param)
    if kind is bool or getattr(param, "is_flag", False):
        param.metavar = ""  # a flag takes no value
        return
    name = (param.name or "value").lower()
    singular = name[:-1] if name.endswith("s") and not name.endswith("ss") else name
    if name in METAVARS:
        metavar = METAVARS[name]
    elif kind is int:
        metavar = "N"
    elif kind is float:
        metavar = "X"
    elif kind is Path and param.param_type_name == "option":
        metavar = "DIR" if singular.endswith("dir") else "PATH"
    else:
        metavar = singular.upper()
    if param.param_type_name == "argument" and param.nargs != 1 and not hasattr(param, "type_descriptor"):
        metavar += "..."  # newer typer adds the dots itself
    param.metavar = metavar


app = typer.Typer(
    cls=RootGroup,
    add_completion=True,
    context_settings={"help_option_names": ["-h", "--help"]},
    help="Evaluate AI coding agents on task suites.",
)


def _print_version(value: bool) -> None:
    if value:
        out.print(f"{PROG} {__version__}", highlight=False)
        raise typer.Exit()


@app.callback()
def root(
    version: Annotated[
        bool, typer.Option("--version", callback=_print_version, is_eager=True, help="Print the version.")
    ] = False,
) -> None:
    """Evaluate AI coding agents on task suites."""


def _load_settings() -> None:
    """``./.env`` into the environment where it has no value yet (``coder_eval.experiment.settings``)."""
    if Path(".env").is_file():  # python-dotenv is imported only for a folder that has one
        from coder_eval.experiment.settings import load_env_file

        load_env_file()


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point: run the app, mapping errors to exit codes once, here. Bare ``coder-eval`` prints help."""
    args = list(sys.argv[1:] if argv is None else argv)
    for stream in (sys.stdout, sys.stderr):
        ascii_fallback(stream)
    try:
        _load_settings()
        code = app(args=args or ["--help"], prog_name=PROG, standalone_mode=False)
    except CoderEvalError as exc:
        console.print(
            f"[red]error:[/red] {escape(inert(str(exc)))}", markup=True, highlight=False, soft_wrap=True
        )
        sys.exit(exit_code(exc))
    except KeyboardInterrupt:
        sys.exit(_interrupted())
    except typer.Abort as exc:  # older click turns Ctrl-C into Abort
        sys.exit(_interrupted() if isinstance(exc.__cause__, KeyboardInterrupt) else 1)
    except _click.ClickException as exc:
        exc.show()
        sys.exit(ExitCode.INVALID_INPUT if isinstance(exc, _click.UsageError) else exc.exit_code)
    sys.exit(code if isinstance(code, int) else 0)


def exit_code(exc: CoderEvalError) -> int:
    """The exit code of an error that reached the top (README's table)."""
    if isinstance(exc, INPUT_ERRORS):
        return ExitCode.INVALID_INPUT
    if isinstance(exc, RunWriteError):
        return ExitCode.RUN_DIR_UNWRITABLE
    if isinstance(exc, ExecutorLost):
        return ExitCode.INTERRUPTED
    return 1


def _interrupted() -> int:
    console.print("interrupted")
    return ExitCode.INTERRUPTED


def whole(header: str, values: Iterable[str]) -> Column:
    """A table column of identifiers (run ids, episode ids, task and criterion ids) that is never cut
    with ``…`` however narrow the terminal: the id is what ``--baseline`` or ``show`` needs, whole.

    Example: ``Table(whole("run", ids), "status")``.
    """
    return Column(header, no_wrap=True, min_width=max([len(header), *map(len, values)]))


def warn(lines: list[str]) -> None:
    for line in lines:
        console.print(
            f"[yellow]warning:[/yellow] {escape(inert(line))}", markup=True, highlight=False, soft_wrap=True
        )
