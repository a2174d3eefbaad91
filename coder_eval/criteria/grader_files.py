"""The suite's own files a task's graders use, found from the task: what the verifier shows them.

Example::

    named_paths(criterion, task_dir, reference_dir)
    # [NamedPath("$TASK_DIR/../graders/check.py", Path("/suite/graders/check.py"))]
    suite_folders(task.grader_sources())
    # [Path("/suite/tasks/t1"), Path("/suite/graders"), Path("/suite/fixtures/app")]

The folders: the task's own (``$TASK_DIR``), the reference folder, the hidden tests' folder, every
template folder and starter-file source (the fixtures), and what the graders name: every
``$TASK_DIR/…`` or ``$REFERENCE_DIR/…`` path in a criterion's fields or a ``post_run`` command (a
named file's folder; a named folder itself; ``..`` allowed). The Python graders among them, and
the task folder's own ``*.py``, are read (never run) for the folders they reach from their own
file: ``os.path.join(os.path.dirname(__file__), "..", "graders")``, ``Path(__file__).resolve()
.parent.parent / "graders"`` and the names they assign such paths to (``sys.path`` entries and data
folders alike), and so are the modules in the folders they reach. Every folder is shown read-only at
its own path, so relative paths between them hold (``coder_eval.episode.verifier``).
"""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from coder_eval.criteria.base import nested_strings
from coder_eval.sandbox.spec import StarterFile, StarterFiles, TemplateDir

SUITE_PATH = re.compile(r"\$\{?(TASK_DIR|REFERENCE_DIR)\}?(/[^\s'\"`;|&<>(){}$*?\[\]]*)?")
"""``$TASK_DIR/x``, ``${TASK_DIR}/x``, ``$REFERENCE_DIR/x``: a path a grader names in the suite."""
MAX_SCRIPTS = 200
"""At most this many Python files are read for the folders they reach."""


@dataclass(frozen=True)
class NamedPath:
    """A suite path as a grader writes it, and where it is on the host."""

    written: str
    host: Path


def named_paths(value: Any, task_dir: Path, reference_dir: Path | None) -> list[NamedPath]:
    """Every ``$TASK_DIR/…`` / ``$REFERENCE_DIR/…`` path in ``value`` (a criterion, a command, any
    nesting of its fields), with ``..`` normalised; a bare ``$TASK_DIR`` names the folder itself."""
    bases = {"TASK_DIR": task_dir, "REFERENCE_DIR": reference_dir}
    found: dict[str, NamedPath] = {}
    data = value.model_dump(mode="json") if hasattr(value, "model_dump") else value
    for text in nested_strings(data):
        for match in SUITE_PATH.finditer(text):
            base = bases[match.group(1)]
            if base is not None:
                host = Path(os.path.normpath(base / (match.group(2) or "/").lstrip("/")))
                found.setdefault(match.group(0), NamedPath(match.group(0), host))
    return list(found.values())


@dataclass(frozen=True)
class GraderSources:
    """What of a task says where its graders' files are: a narrow view, not the whole task
    (``TaskSpec.grader_sources()`` makes it).

    Example: ``GraderSources(Path("/suite/tasks/t1"), reference_dir=None, hidden_tests_dir=None,
    template_sources=(), graded=(criterion,))``.
    """

    task_dir: Path
    reference_dir: Path | None
    hidden_tests_dir: Path | None
    template_sources: tuple[Any, ...]
    """The sandbox's template sources (``TemplateDir``, ``StarterFiles``, ...)."""
    graded: tuple[Any, ...]
    """Whatever may name suite paths: the criteria, and the ``post_run`` commands."""


def suite_folders(sources: GraderSources) -> list[Path]:
    """Every folder of the suite the task's graders may use (see the module docstring), outermost
    first, none inside another."""
    folders = [sources.task_dir, *_task_folders(sources)]
    named = [
        p.host for item in sources.graded for p in named_paths(item, sources.task_dir, sources.reference_dir)
    ]
    folders += [p if p.is_dir() else p.parent for p in named if p.exists()]
    scripts = [p for p in named if p.suffix == ".py" and p.is_file()]
    scripts += sorted(sources.task_dir.glob("*.py"))
    folders += reached_folders(scripts)
    return outermost(Path(os.path.normpath(f)) for f in folders if f.is_dir())


def _task_folders(sources: GraderSources) -> Iterator[Path]:
    """The reference and hidden tests' folders, template folders and starter-file sources' folders."""
    if sources.reference_dir is not None:
        yield sources.reference_dir
    if sources.hidden_tests_dir is not None:
        yield sources.hidden_tests_dir
    for source in sources.template_sources:
        if isinstance(source, TemplateDir):
            yield Path(source.path)
        if isinstance(source, TemplateDir | StarterFiles):
            for starter in source.files:
                if isinstance(starter, StarterFile) and starter.source is not None:
                    yield Path(starter.source).parent


def outermost(folders: Iterable[Path]) -> list[Path]:
    """``folders`` without duplicates or folders inside another of them, in their first order."""
    kept: list[Path] = []
    for folder in dict.fromkeys(folders):
        if any(folder.is_relative_to(k) for k in kept):
            continue
        kept = [k for k in kept if not k.is_relative_to(folder)] + [folder]
    return kept


def reached_folders(scripts: Iterable[Path]) -> list[Path]:
    """The existing folders ``scripts`` reach from their own file, and those their neighbours in
    those folders reach (at most ``MAX_SCRIPTS`` files read)."""
    queue = list(dict.fromkeys(scripts))
    seen: set[Path] = set()
    found: list[Path] = []
    while queue and len(seen) < MAX_SCRIPTS:
        script = queue.pop(0)
        if script in seen:
            continue
        seen.add(script)
        for path in file_relative_paths(script):
            folder = path if path.is_dir() else path.parent if path.exists() else None
            if folder is not None and folder not in found:
                found.append(folder)
                queue += sorted(folder.glob("*.py"))
    return found


def file_relative_paths(script: Path) -> list[Path]:
    """The paths ``script`` computes from its own ``__file__`` (see the module docstring)."""
    try:
        tree = ast.parse(script.read_text(encoding="utf-8", errors="replace"))
    except (OSError, SyntaxError, ValueError):
        return []
    paths = _FilePaths(script)
    paths.visit(tree)
    return [p for p in dict.fromkeys(paths.found) if p != script]


class _FilePaths(ast.NodeVisitor):
    """Evaluates path expressions built from ``__file__`` (a few ``os.path`` and ``pathlib`` forms).

    Only the outermost path of an expression counts (``Path(__file__).parent.parent / "graders"``
    reaches ``graders``, not the folder above it), and a name counts where it is used, not where a
    path is assigned to it."""

    def __init__(self, script: Path) -> None:
        self.script = script.absolute()
        self.names: dict[str, Path | str] = {}
        self.found: list[Path] = []

    def visit_Assign(self, node: ast.Assign) -> None:
        value = self.value(node.value)
        for target in node.targets:
            if isinstance(target, ast.Name) and value is not None:
                self.names[target.id] = value
        if value is None:
            self.visit(node.value)

    def generic_visit(self, node: ast.AST) -> None:
        if isinstance(node, ast.expr) and not (
            isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)
        ):
            value = self.value(node)
            if isinstance(value, Path):
                self.found.append(Path(os.path.normpath(value)))
                return
        super().generic_visit(node)

    def value(self, node: ast.AST) -> Path | str | None:
        """The path (from ``__file__``) or string constant ``node`` is, if it is one of the forms."""
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.Name):
            return self.script if node.id == "__file__" else self.names.get(node.id)
        if isinstance(node, ast.Attribute) and node.attr == "parent":
            inner = self.value(node.value)
            return inner.parent if isinstance(inner, Path) else None
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute):
            return self._parents(node)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            return _join(self.value(node.left), self.value(node.right))
        if isinstance(node, ast.Call):
            return self._call(node)
        return None

    def _parents(self, node: ast.Subscript) -> Path | None:
        attribute = node.value
        assert isinstance(attribute, ast.Attribute)
        inner = self.value(attribute.value)
        index = node.slice
        if attribute.attr != "parents" or not isinstance(inner, Path):
            return None
        if isinstance(index, ast.Constant) and isinstance(index.value, int) and index.value >= 0:
            return inner.parents[index.value] if index.value < len(inner.parents) else None
        return None

    def _call(self, node: ast.Call) -> Path | str | None:
        name = _dotted(node.func)
        args = [self.value(a) for a in node.args]
        if name in ("os.path.dirname", "path.dirname", "dirname") and len(args) == 1:
            return args[0].parent if isinstance(args[0], Path) else None
        if name in ("os.path.join", "path.join", "join") and args and isinstance(args[0], Path):
            joined: Path | str | None = args[0]
            for part in args[1:]:
                joined = _join(joined, part)
            return joined
        if name.split(".")[-1] in ("abspath", "realpath", "normpath", "Path", "PurePath") and len(args) == 1:
            return args[0] if isinstance(args[0], Path) else None
        if isinstance(node.func, ast.Attribute) and node.func.attr in ("resolve", "absolute", "joinpath"):
            joined = self.value(node.func.value)
            for part in args if node.func.attr == "joinpath" else []:
                joined = _join(joined, part)
            return joined if isinstance(joined, Path) else None
        return None


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return ""


def _join(left: Path | str | None, right: Path | str | None) -> Path | None:
    if isinstance(left, Path) and isinstance(right, str):
        return left / right
    return None
