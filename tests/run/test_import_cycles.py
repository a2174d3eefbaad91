"""No module of coder_eval imports itself through others; the episode, the executors and the run
session import one way: run -> executors -> episode.

The graph is read from the source (every ``import`` statement, at any depth: function-level imports
count too), so a cycle cannot hide behind a lazy import. Imports under ``if TYPE_CHECKING:`` are
left out: they never run.

The package is parsed in a fresh interpreter: CPython 3.11 before 3.11.9 keeps the AST
constructor's recursion depth per interpreter, not per thread, so ``ast.parse`` in a worker where
an earlier test left a thread parsing can fail with "AST constructor recursion depth mismatch".
"""

from __future__ import annotations

import ast
import functools
import json
import subprocess
import sys
from pathlib import Path

from tests.helpers import REPO

PACKAGE = REPO / "coder_eval"
OURS = (
    "coder_eval.episode.runner",
    "coder_eval.episode.plan",
    "coder_eval.executors",
    "coder_eval.run",
    "coder_eval.cli",
)


def module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


Graph = dict[str, set[str]]


def import_graph(*, module_level_only: bool) -> Graph:
    """The graph :func:`parsed_graph` builds, built in a fresh interpreter (a copy each call)."""
    return {name: set(targets) for name, targets in both_graphs()[module_level_only].items()}


@functools.cache
def both_graphs() -> dict[bool, Graph]:
    script = [sys.executable, "-c", "from tests.run.test_import_cycles import main; main()"]
    out = subprocess.run(script, cwd=REPO, capture_output=True, text=True, check=True, timeout=120).stdout
    found = json.loads(out)
    return {flag == "module_level": {n: set(t) for n, t in found[flag].items()} for flag in found}


def main() -> None:
    """Print both graphs as JSON (what :func:`both_graphs` reads from a fresh interpreter)."""
    graphs = {
        flag: {n: sorted(t) for n, t in parsed_graph(module_level_only=flag == "module_level").items()}
        for flag in ("module_level", "everywhere")
    }
    print(json.dumps(graphs))


def parsed_graph(*, module_level_only: bool) -> Graph:
    """Modules of coder_eval, and an edge for each import of another (the package root left out:
    every module may read ``__version__``)."""
    modules = {module_name(path): path for path in PACKAGE.rglob("*.py")}
    graph: Graph = {name: set() for name in modules}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        nodes = tree.body if module_level_only else list(walk_running(tree))
        for node in nodes:
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
            else:
                continue
            for target in targets:
                if target in modules and target != "coder_eval" and not name.startswith(target):
                    graph[name].add(target)
    return graph


def walk_running(tree: ast.AST) -> list[ast.AST]:
    """Every node of ``tree`` but those under ``if TYPE_CHECKING:`` (type-only imports never run)."""
    found: list[ast.AST] = []
    todo = [tree]
    while todo:
        node = todo.pop()
        found.append(node)
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                todo.extend(child.orelse)
            else:
                todo.append(child)
    return found


def reached(graph: Graph, start: str) -> set[str]:
    """Every module ``start`` imports, directly or through others."""
    seen: set[str] = set()
    todo = list(graph[start])
    while todo:
        module = todo.pop()
        if module not in seen:
            seen.add(module)
            todo.extend(graph[module])
    return seen


def within(module: str, packages: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in packages)


def cycles_through(graph: Graph, packages: tuple[str, ...]) -> list[str]:
    """Modules of ``packages`` that import themselves through others."""
    return sorted(m for m in graph if within(m, packages) and m in reached(graph, m))


def test_the_runner_never_imports_the_executors_or_the_session() -> None:
    graph = import_graph(module_level_only=False)
    below = reached(graph, "coder_eval.episode.runner")
    assert not [m for m in below if within(m, ("coder_eval.executors", "coder_eval.run", "coder_eval.cli"))]
    assert "coder_eval.executors.local" in reached(graph, "coder_eval.run.batch")
    assert "coder_eval.episode.runner" in reached(graph, "coder_eval.executors.local")


def test_no_import_cycle_runs_through_the_run_lifecycle() -> None:
    assert cycles_through(import_graph(module_level_only=True), OURS) == []
    lifecycle = tuple(p for p in OURS if p != "coder_eval.episode.runner")  # the episode's own steps aside
    assert cycles_through(import_graph(module_level_only=False), lifecycle) == []


def test_no_module_imports_itself_through_others() -> None:
    graph = import_graph(module_level_only=False)
    assert cycles_through(graph, ("coder_eval",)) == []


def test_type_only_imports_are_left_out_and_lazy_ones_count() -> None:
    source = "if TYPE_CHECKING:\n    import a\nelse:\n    import b\ndef f():\n    import c\n"
    running = walk_running(ast.parse(source))
    assert {alias.name for node in running if isinstance(node, ast.Import) for alias in node.names} == {
        "b",
        "c",
    }


def test_the_check_sees_a_cycle() -> None:
    graph = import_graph(module_level_only=True)
    graph["coder_eval.episode.runner"].add("coder_eval.executors.local")  # what run_batch in runner.py did
    assert cycles_through(graph, ("coder_eval.episode.runner",)) == ["coder_eval.episode.runner"]


ROOT = "<root>"
NEVER: dict[str, set[str]] = {
    "agents": {"episode", "run", "cli"},
    "criteria": {"episode", "run", "cli"},
    "sandbox": {"episode", "run", "cli"},
    "task": {"episode", "run", "cli"},
    "episode": {"executors", "run", "cli"},
    "analysis": {"episode", "executors", "run", "cli"},
}
"""Folder -> the folders it never imports (CONTRIBUTING.md, "Layout")."""
ANALYSIS_LAYERS = ("frames", "stats", "judging", "answer", "views")
"""``coder_eval.analysis``'s layers, bottom first: each imports only those before it."""


def folder_of(module: str) -> str:
    """``coder_eval.analysis.stats.compare`` -> ``analysis``; a module at the root -> ``<root>``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and (PACKAGE / parts[1]).is_dir() else ROOT


def folder_graph(graph: Graph) -> Graph:
    """Folder -> the folders its modules import (the root's leaves left out)."""
    folders: Graph = {}
    for module, targets in graph.items():
        mine = folder_of(module)
        folders.setdefault(mine, set()).update(
            theirs for t in targets if (theirs := folder_of(t)) not in (mine, ROOT)
        )
    return folders


def test_no_two_folders_import_each_other() -> None:
    folders = folder_graph(import_graph(module_level_only=False))
    del folders[ROOT]  # the root is tested on its own: it holds leaves
    knots = sorted(f for f in folders if f in reached(folders, f))
    assert knots == [], f"folders that import themselves through others: {knots}"


def test_folders_never_import_those_above_them() -> None:
    folders = folder_graph(import_graph(module_level_only=False))
    broken = {f: sorted(folders.get(f, set()) & never) for f, never in NEVER.items()}
    assert {f: b for f, b in broken.items() if b} == {}


def test_the_root_holds_only_leaves() -> None:
    graph = import_graph(module_level_only=False)
    root = {m for m in graph if folder_of(m) == ROOT and m not in ("coder_eval", "coder_eval.__main__")}
    above = {m: sorted(t for t in graph[m] if folder_of(t) != ROOT) for m in root}
    assert {m: t for m, t in above.items() if t} == {}, "root modules that import a folder"
    listed = (REPO / "CONTRIBUTING.md").read_text(encoding="utf-8").split("The package root holds only", 1)[1]
    names = set(listed.split("```text", 1)[1].split("\n", 1)[1].split("```", 1)[0].split())
    assert {f"{m.split('.')[-1]}.py" for m in root} == names, "CONTRIBUTING.md's list of root leaves"


def test_each_analysis_layer_imports_only_those_before_it() -> None:
    graph = import_graph(module_level_only=False)
    upward = []
    for module, targets in graph.items():
        parts = module.split(".")
        if parts[:2] != ["coder_eval", "analysis"] or len(parts) < 4:
            continue
        mine = ANALYSIS_LAYERS.index(parts[2])
        for target in targets:
            theirs = target.split(".")
            inside = theirs[:2] == ["coder_eval", "analysis"] and len(theirs) > 3
            if inside and ANALYSIS_LAYERS.index(theirs[2]) > mine:
                upward.append(f"{module} -> {target}")
    assert upward == []


def test_the_folder_check_sees_a_knot() -> None:
    graph = import_graph(module_level_only=False)
    graph["coder_eval.sandbox.base"].add("coder_eval.agents.base")  # agents import sandbox already
    folders = folder_graph(graph)
    assert "sandbox" in reached(folders, "sandbox")
