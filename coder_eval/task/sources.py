"""A validated task's files: prompt and reference read, paths made absolute, each checked to exist.

Example: ``resolve_sources(doc, task)`` -> the task with ``initial_prompt_file`` read into
``initial_prompt`` and every task-relative path absolute; a ``TaskError`` lists each missing file
with the line that names it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from coder_eval.agents.skill_sources import PluginOrigin, with_resolved_plugins
from coder_eval.agents.spec import read_prompt_file
from coder_eval.criteria.base import CriterionFileError
from coder_eval.errors import AgentError, TaskError
from coder_eval.file_kinds import not_readable
from coder_eval.sandbox.spec import RepoSource, StarterFile, StarterFiles, TemplateDir
from coder_eval.scripted.script import load_script
from coder_eval.task.schema import ReferenceFile, ReferenceFolder, TaskSpec
from coder_eval.yaml_source import YamlDoc


def resolve_sources(
    doc: YamlDoc, task: TaskSpec, plugin_origins: Mapping[int, PluginOrigin] | None = None
) -> TaskSpec:
    """Read prompt and reference files; make source paths absolute; check that each exists.
    ``plugin_origins``: the ``agent.plugins`` entries (by index) another file wrote (an experiment's
    layers): each is looked for next to that file, and its problems name it."""
    base = doc.path.resolve().parent
    problems: list[str] = []

    def existing(relative: str, loc: tuple[str | int, ...], want_dir: bool) -> str:
        target = _resolved(base / relative)
        problem = not_readable(target, want_dir=want_dir)
        if problem is not None:
            kind = "directory" if want_dir else "file"
            problems.append(
                f"{doc.where(loc)}: {'.'.join(map(str, loc))}: {kind} {relative!r} "
                f"{'not found' if problem in ('not found', 'not a directory') else 'is ' + problem} "
                f"(looked for {target}); paths are relative to the task file"
            )
        return str(target)

    update: dict[str, Any] = {"agent": _resolve_agent_files(task, base, problems, doc)}
    if task.initial_prompt_file is not None:
        prompt_path = Path(existing(task.initial_prompt_file, ("initial_prompt_file",), want_dir=False))
        if prompt_path.is_file():
            update["initial_prompt"] = prompt_path.read_text(encoding="utf-8")
    if isinstance(task.reference_solution, ReferenceFile):
        script = Path(existing(task.reference_solution.file, ("reference_solution", "file"), want_dir=False))
        update["reference_solution"] = script.read_text(encoding="utf-8") if script.is_file() else None
    if isinstance(task.reference_solution, ReferenceFolder):
        solution = task.reference_solution
        found = _resolved(base / solution.path)
        where = ("reference_solution", "path")
        path = existing(solution.path, where, want_dir=True) if not found.is_file() else str(found)
        update["reference_solution"] = solution.model_copy(update={"path": path})
    if task.hidden_tests is not None:
        hidden = existing(task.hidden_tests.path, ("hidden_tests", "path"), want_dir=True)
        update["hidden_tests"] = task.hidden_tests.model_copy(update={"path": hidden})
    sources = [
        _resolve_source(source, ("sandbox", "template_sources", i), base, existing)
        for i, source in enumerate(task.sandbox.template_sources)
    ]
    sandbox = task.sandbox.model_copy(update={"template_sources": sources})
    update["sandbox"] = sandbox.with_task_paths(existing)
    origins = plugin_origins or {}

    def origin_of(i: int) -> PluginOrigin:
        return origins.get(i) or PluginOrigin(
            doc.path, doc.where(("agent", "plugins", i)), f"agent.plugins[{i}]"
        )

    update["agent"], plugin_problems = with_resolved_plugins(
        update["agent"], origin_of, sources, bool(task.pre_run)
    )
    problems += plugin_problems
    if task.reference is not None:
        folder = existing(task.reference.directory, ("reference", "directory"), want_dir=True)
        update["reference"] = task.reference.model_copy(update={"directory": folder})
    if isinstance(task.scripted, str):
        update["scripted"] = existing(task.scripted, ("scripted",), want_dir=False)
        if Path(update["scripted"]).is_file():
            try:
                load_script(update["scripted"])
            except TaskError as exc:
                problems.append(f"{doc.where(('scripted',))}: scripted: {exc}")
    update["success_criteria"] = [
        _resolve_criterion(c, i, base, sources, doc, problems) for i, c in enumerate(task.success_criteria)
    ]
    if task.simulation is not None and isinstance(task.simulation.scripted, str):
        user_script = existing(task.simulation.scripted, ("simulation", "scripted"), want_dir=False)
        update["simulation"] = task.simulation.model_copy(update={"scripted": user_script})
    if problems:
        raise TaskError("\n".join(problems))
    return task.model_copy(update=update)


def _resolved(path: Path) -> Path:
    """``path`` made absolute with its links followed; one in a symlink loop as it is (absolute)."""
    try:
        return path.resolve()
    except (RuntimeError, OSError):  # a symlink loop (RuntimeError up to Python 3.12)
        return path.absolute()


def _resolve_agent_files(task: TaskSpec, base: Path, problems: list[str], doc: YamlDoc) -> Any:
    """The agent block with ``system_prompt_file`` read into ``system_prompt`` and a
    ``claude_settings`` file read into a mapping (both relative to the task file)."""
    agent: Any = task.agent
    try:
        agent = read_prompt_file(agent, base)
    except AgentError as exc:
        problems.append(f"{doc.where(('agent', 'system_prompt_file'))}: {exc}")
    settings = getattr(agent, "claude_settings", None)
    if isinstance(settings, str):
        path = (base / settings).resolve()
        try:
            loaded = json.loads(path.read_text(encoding="utf-8"))
            if not isinstance(loaded, dict):
                raise ValueError("not a JSON object")
            agent = agent.model_copy(update={"claude_settings": loaded})
        except (OSError, ValueError) as exc:
            problems.append(
                f"{doc.where(('agent', 'claude_settings'))}: agent.claude_settings: cannot read {path}: {exc}"
            )
    return agent


def _resolve_source(source: Any, loc: tuple[str | int, ...], base: Path, existing: Any) -> Any:
    """A template source with its task-relative paths made absolute (and checked)."""
    if isinstance(source, TemplateDir):
        path = existing(source.path, (*loc, "path"), True)
        files = [_resolve_starter(f, (*loc, "files", j), existing) for j, f in enumerate(source.files)]
        return source.model_copy(update={"path": path, "files": files})
    if isinstance(source, StarterFiles):
        files = [_resolve_starter(f, (*loc, "files", j), existing) for j, f in enumerate(source.files)]
        return source.model_copy(update={"files": files})
    if isinstance(source, RepoSource) and "://" not in source.url and not source.url.startswith("git@"):
        return source.model_copy(update={"url": existing(source.url, (*loc, "url"), True)})
    return source


def _resolve_criterion(
    criterion: Any, index: int, base: Path, sources: list[Any], doc: YamlDoc, problems: list[str]
) -> Any:
    """A criterion with the files it names resolved (its ``with_task_files``: a ``json_check``'s
    schema file, its pristine copy found and checked)."""
    try:
        return criterion.with_task_files(base, sources)
    except CriterionFileError as exc:
        where = doc.where(("success_criteria", index, exc.field))
        problems.append(f"{where}: success_criteria[{index}].{exc.field}: {exc}")
        return criterion


def _resolve_starter(starter: Any, loc: tuple[str | int, ...], existing: Any) -> Any:
    if isinstance(starter, StarterFile) and starter.source is not None:
        return starter.model_copy(update={"source": existing(starter.source, (*loc, "source"), False)})
    return starter
