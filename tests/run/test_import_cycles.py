"""The episode, the executors and the run session import one way: run -> executors -> runner.

The graph is read from the source (every ``import`` statement, at any depth: type-only and
function-level imports count too), so a cycle cannot hide behind a lazy import.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.helpers import REPO

PACKAGE = REPO / "coder_eval"
OURS = (
    "coder_eval.runner",
    "coder_eval.episode_plan",
    "coder_eval.executors",
    "coder_eval.run",
    "coder_eval.cli",
)


def module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


Graph = dict[str, set[str]]


def import_graph(*, module_level_only: bool) -> Graph:
    """Modules of coder_eval, and an edge for each import of another (the package root left out:
    every module may read ``__version__``)."""
    modules = {module_name(path): path for path in PACKAGE.rglob("*.py")}
    graph: Graph = {name: set() for name in modules}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        nodes = tree.body if module_level_only else list(ast.walk(tree))
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
    below = reached(graph, "coder_eval.runner")
    assert not [m for m in below if within(m, ("coder_eval.executors", "coder_eval.run", "coder_eval.cli"))]
    assert "coder_eval.executors.local" in reached(graph, "coder_eval.run.batch")
    assert "coder_eval.runner" in reached(graph, "coder_eval.executors.local")


def test_no_import_cycle_runs_through_the_run_lifecycle() -> None:
    assert cycles_through(import_graph(module_level_only=True), OURS) == []
    lifecycle = tuple(p for p in OURS if p != "coder_eval.runner")  # the episode's own steps aside
    assert cycles_through(import_graph(module_level_only=False), lifecycle) == []


def test_the_check_sees_a_cycle() -> None:
    graph = import_graph(module_level_only=True)
    graph["coder_eval.runner"].add("coder_eval.executors.local")  # what run_batch in runner.py did
    assert cycles_through(graph, ("coder_eval.runner",)) == ["coder_eval.runner"]
