"""Loading tasks: sources found on disk, read by their format's reader, validated and fanned out.

``READERS`` is the table of task formats: a coder_eval YAML task file, a Harbor task directory
(``coder_eval.interop.task_readers.harbor``) and a Terminal-Bench task folder (``terminal_bench``).
Each reader says which paths are its sources and reads one into a document; the schema
(``coder_eval.task.schema``) validates every document alike.

Example: ``load_tasks([Path("tasks/examples")])`` -> one ``TaskSpec`` per task (one per dataset row
for dataset tasks); every problem is a ``TaskError`` naming the file, line and field.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from coder_eval.agents import kinds_with_field, override_agent
from coder_eval.agents.skill_sources import PluginOrigin
from coder_eval.errors import TaskError
from coder_eval.file_kinds import not_readable
from coder_eval.interop.task_readers.harbor import CONFIG as HARBOR_CONFIG
from coder_eval.interop.task_readers.harbor import harbor_doc, is_harbor_task
from coder_eval.interop.task_readers.terminal_bench import RUNNER as TERMINAL_BENCH_RUNNER
from coder_eval.interop.task_readers.terminal_bench import is_terminal_bench_task, terminal_bench_doc
from coder_eval.plugins import check_plugins
from coder_eval.task.dataset import dataset_rows, substitute_row
from coder_eval.task.schema import TASK_FIELDS, TaskSpec
from coder_eval.task.sources import resolve_sources
from coder_eval.yaml_source import YamlDoc, explain, parse_yaml, read_text_file, read_yaml


@dataclass(frozen=True)
class TaskReader:
    """One task format: which paths are its sources, and how one is read into a task document."""

    name: str
    claims: Callable[[Path], bool]
    """Whether a path given by name (a file, or a folder that is one task) is a source of this format."""
    read: Callable[[Path], YamlDoc]
    marker: str | None = None
    """A file whose folder may be one task of this format (``claims`` decides), searched for in
    folders (None: files only)."""


def _read_task_file(path: Path) -> YamlDoc:
    return read_yaml(path, kind=TaskError)


READERS: tuple[TaskReader, ...] = (
    TaskReader("harbor", is_harbor_task, harbor_doc, marker=HARBOR_CONFIG),
    TaskReader("terminal-bench", is_terminal_bench_task, terminal_bench_doc, marker=TERMINAL_BENCH_RUNNER),
    TaskReader("yaml", lambda path: path.is_file(), _read_task_file),
)
"""Every task format, the first that claims a path reading it (a YAML task file last: any file)."""


def reader_of(path: Path) -> TaskReader | None:
    """The reader of a task source given by name, or None when no format claims it."""
    return next((reader for reader in READERS if reader.claims(path)), None)


def discover(paths: Iterable[Path], notes: list[str] | None = None) -> list[Path]:
    """Task files under ``paths``: files as given, directories searched for ``*.yaml`` / ``*.yml``,
    Harbor task directories (a folder holding ``task.toml``) and Terminal-Bench task folders (one
    holding ``task.yaml`` and ``run-tests.sh``), given or found; each file once, however often or by
    whatever path it is given.

    In a directory search, YAML files with none of the task fields (scripts, fixtures) are not tasks,
    and folders named ``fixtures`` or starting with ``_`` or ``.`` are not searched; a FIFO, socket,
    device or symlink loop named like a task file is skipped unopened, with a line in ``notes``. A path
    given by name that is one of those is refused, saying which.
    """
    found: dict[Path, Path] = {}
    for path in paths:
        if path.is_dir() and reader_of(path) is not None:  # a folder that is one task (Harbor's)
            found.setdefault(path.resolve(), path)
        elif path.is_dir():
            for candidate in _search(path, notes if notes is not None else []):
                found.setdefault(candidate.resolve(), candidate)
        elif path.is_file() and (problem := not_readable(path)) is None:
            found.setdefault(path.resolve(), path)
        else:
            problem = not_readable(path)
            problem = "no such file or directory" if problem in (None, "not found") else problem
            raise TaskError(f"{path}: {problem}; pass task files or folders of them")
    if not found:
        raise TaskError(f"no task files found in {', '.join(map(str, paths))}")
    return list(found.values())


def _search(folder: Path, notes: list[str]) -> list[Path]:
    """The task files and task folders (Harbor's, Terminal-Bench's) in ``folder`` (see :func:`discover`)."""
    folders = [
        c.parent
        for reader in READERS
        if reader.marker is not None
        for c in sorted(folder.rglob(reader.marker))
        if _searched(c, folder) and reader.claims(c.parent)
    ]
    found = list(folders)
    for candidate in sorted(folder.rglob("*.y*ml")):
        if not _searched(candidate, folder) or any(candidate.is_relative_to(f) for f in folders):
            continue
        if candidate.suffix not in {".yaml", ".yml"}:
            continue
        problem = not_readable(candidate)
        if problem is not None:
            notes.append(f"{candidate}: {problem}; skipped, not read as a task")
        elif _looks_like_task(candidate):
            found.append(candidate)
    return found


def _searched(candidate: Path, root: Path) -> bool:
    parts = candidate.relative_to(root).parts[:-1]
    return not any(p == "fixtures" or p.startswith(("_", ".")) for p in parts)


def _looks_like_task(path: Path) -> bool:
    try:
        data = parse_yaml(read_text_file(path, kind=TaskError)).data
    except Exception:  # the loader reports every problem properly, with the file and line
        return True
    return isinstance(data, dict) and bool(TASK_FIELDS & set(data))


def load_tasks(paths: Iterable[Path], overrides: Mapping[str, Any] | None = None) -> list[TaskSpec]:
    """Load, validate and fan out every task under ``paths``; ``overrides`` deep-merge over each task.

    A broken or shadowing plugin is a ``PluginError`` first (``coder_eval.plugins``)."""
    check_plugins()
    tasks: list[TaskSpec] = []
    errors: list[str] = []
    for path in discover(paths):
        try:
            tasks.extend(build_tasks(task_doc(path), overrides or {}))
        except TaskError as exc:
            errors.append(str(exc))
    seen: dict[str, Path | None] = {}
    for task in tasks:
        if task.task_id in seen:
            errors.append(
                f"{task.source_path}: task_id {task.task_id!r} is also used by {seen[task.task_id]}"
            )
        seen[task.task_id] = task.source_path
    if errors:
        raise TaskError("\n".join(errors))
    return tasks


def task_doc(path: Path) -> YamlDoc:
    """A task source as a document, read by the first reader that claims it (``READERS``): a task
    file, or a Harbor task directory or its ``task.toml``."""
    reader = reader_of(path)
    return (reader.read if reader is not None else _read_task_file)(path)


def deep_merge(base: Mapping[str, Any], top: Mapping[str, Any]) -> dict[str, Any]:
    """``top`` over ``base``, recursing into mappings; lists and scalars in ``top`` replace."""
    merged = dict(base)
    for key, value in top.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def build_tasks(
    doc: YamlDoc, overrides: Mapping[str, Any], plugin_origins: Mapping[int, PluginOrigin] | None = None
) -> list[TaskSpec]:
    """One task file (with ``overrides`` merged over it) -> validated tasks, one per dataset row.
    ``plugin_origins``: the files other than the task file that wrote ``agent.plugins`` entries
    (``coder_eval.task.sources.resolve_sources``)."""
    data = deep_merge(doc.data, {k: v for k, v in overrides.items() if k != "agent"})
    if isinstance(overrides.get("agent"), Mapping):
        data["agent"] = override_agent(dict(doc.data.get("agent") or {}), dict(overrides["agent"]))
    rows = dataset_rows(doc, data.get("dataset"))
    if rows is None:
        return [_validate(doc, data, None, plugin_origins)]
    return [_validate(doc, substitute_row(doc, data, row), row, plugin_origins) for row in rows]


def _validate(
    doc: YamlDoc,
    data: dict[str, Any],
    row: dict[str, Any] | None,
    plugin_origins: Mapping[int, PluginOrigin] | None,
) -> TaskSpec:
    try:
        task = TaskSpec.model_validate({**data, "source_path": doc.path.resolve(), "dataset_row": row})
    except ValidationError as exc:
        raise TaskError(_with_kind_hints(explain(exc, doc, TaskSpec), exc)) from exc
    return resolve_sources(doc, task, plugin_origins)


def _with_kind_hints(message: str, exc: ValidationError) -> str:
    """Say which agent kinds have a field written on a kind that does not: ``allowed_tools`` on an
    ``oracle`` block is a field of the CLI agents, not of the oracle."""
    hints = []
    for error in exc.errors():
        loc = error["loc"]
        if error["type"] == "extra_forbidden" and len(loc) == 3 and loc[0] == "agent":
            owners = kinds_with_field(str(loc[2]))
            if owners:
                hints.append(
                    f"agent.{loc[2]} is a field of the {', '.join(owners)} agent(s), not of {loc[1]!r}"
                )
    return "\n".join([message, *hints])
