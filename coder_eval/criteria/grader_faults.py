"""A grader's own faults, confirmed by the harness before the grader runs: never the agent's fail.

Example::

    await check_grader_files(ctx, criterion)     # GraderError: "the grader's file $TASK_DIR/../graders
                                                 # /check.py (/suite/graders/check.py) does not exist"

Before a command-running criterion runs, every suite file it names (``$TASK_DIR/…``,
``$REFERENCE_DIR/…``: ``coder_eval.criteria.grader_files``) must exist, each Python grader among them and
each module of the suite it imports (found beside it or in a folder it reaches from its own file)
must compile, and the verifier must be able to read them all. Otherwise the criterion raises
``GraderError``: the episode is ``invalid`` (status ``grader_error``) with that message.

Only facts the harness gathers itself count. What a grader prints is not used: the code under test
runs inside the grader's process and could print a forged traceback to turn its failure into an
episode that rates leave out. A grader that crashes while checking the agent's work (a traceback
raised in its own code at run time) therefore stays that criterion's failure, its output in the
details.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

from coder_eval.criteria.base import GradingContext
from coder_eval.criteria.grader_files import NamedPath, file_relative_paths, named_paths
from coder_eval.errors import GraderError
from coder_eval.sandbox.base import Sandbox

UNREADABLE = 'for f; do [ -r "$f" ] || printf "%s\\n" "$f"; done'
"""Prints each argument the command cannot read (run with ``/bin/sh``, nothing from the workspace)."""


async def check_grader_files(ctx: GradingContext, criterion: Any) -> None:
    """``GraderError`` when a suite file ``criterion`` names cannot be used (see the module docstring)."""
    named = named_paths(criterion, ctx.task_dir, ctx.hidden.reference_dir)
    if not named:
        return
    missing = [p for p in named if not p.host.exists()]
    if missing:
        raise GraderError(
            f"the grader's file {missing[0].written} ({missing[0].host}) does not exist: fix the path "
            "in the task, or add the file to the suite"
        )
    files = [p.host for p in named] + [m for p in named for m in suite_modules(p.host)]
    for path in (f for f in dict.fromkeys(files) if f.suffix == ".py" and f.is_file()):
        problem = compile_problem(path)
        if problem is not None:
            raise GraderError(f"the grader's {path} does not compile: {problem}")
    unreadable = await unreadable_in(ctx.sandbox, list(dict.fromkeys(files)))
    if unreadable:
        raise GraderError(
            f"the verifier cannot read the grader's {_written(unreadable[0], named)}: the suite's files "
            "are not visible to graders here"
        )


def suite_modules(script: Path) -> list[Path]:
    """The suite's modules ``script`` imports: ``<name>.py`` or ``<name>/__init__.py`` beside it or
    in a folder it reaches from its own file."""
    if script.suffix != ".py" or not script.is_file():
        return []
    try:
        tree = ast.parse(script.read_text(encoding="utf-8", errors="replace"))
    except (SyntaxError, ValueError):
        return []
    names = {
        alias.name.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    }
    names |= {
        node.module.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module and not node.level
    }
    folders = [script.parent, *(p for p in file_relative_paths(script) if p.is_dir())]
    found = []
    for name in sorted(names):
        for folder in folders:
            candidate = next(
                (c for c in (folder / f"{name}.py", folder / name / "__init__.py") if c.is_file()), None
            )
            if candidate is not None:
                found.append(candidate)
                break
    return found


def compile_problem(path: Path) -> str | None:
    """Why ``path`` does not compile as Python (``invalid syntax (line 3)``), or None."""
    try:
        compile(path.read_bytes(), str(path), "exec")
    except SyntaxError as exc:
        return f"{exc.msg} (line {exc.lineno})"
    except (OSError, ValueError) as exc:
        return str(exc)
    return None


async def unreadable_in(sandbox: Sandbox, paths: list[Path]) -> list[str]:
    """Those of ``paths`` a command in ``sandbox`` cannot read."""
    if not paths:
        return []
    result = await sandbox.exec(["/bin/sh", "-c", UNREADABLE, "sh", *map(str, paths)], timeout=60)
    if result.exit_code != 0:
        raise GraderError(f"cannot check the grader's files in the verifier: {result.output.strip()[-300:]}")
    return result.stdout.splitlines()


def _written(host: str, named: list[NamedPath]) -> str:
    match = next((p for p in named if str(p.host) == host), None)
    return f"{match.written} ({host})" if match is not None else host
