"""Every fenced block in README.md, CONTRIBUTING.md, reports/README.md and docs/*.md is run or checked
here, so samples cannot rot.

How to write a block (the fence's info string: a language, then ``key=value`` words):

- ```` ```python ````: executed as a script (``python file.py`` would run it: top-level ``await`` is a
  ``SyntaxError`` there, so samples use ``asyncio.run``); ```` ```python cell=notebook ```` marks a
  notebook cell, where top-level ``await`` works.
- ```` ```bash ````: each command (``\\`` continues a line) runs through bash; it must exit 0, or the
  code given with ``exit=N``. ``coder-eval`` is the project's own (a command that is ``coder-eval``
  and words alone runs forked, as ``tests.helpers.coder_eval`` runs it). ``needs=docker``: it runs a
  task in a container, so the test has a docker engine started first (as for the tests marked
  ``docker``).
- ```` ```yaml as=KIND ````: loaded by coder_eval's own loader; KIND is ``task`` (a whole task file),
  ``task-part`` (top-level task fields, put over a minimal task), ``criteria`` (a list of criteria),
  ``experiment``, ``variant-part`` (fields of one variant) or ``script`` (a scripted-model script);
  ``over=tasks/demo/x.yaml`` puts a part over that task instead of a minimal one.
- ```` ```json ````: parsed.
- anything else, or a block that must not run (a real model, the full demo, an excerpt with
  ``...``): ```` ```text norun="why" ```` -- the reason is required.

Each block runs on its own, in a fresh folder that holds a copy of tasks/ and experiments/, of the
fixture runs under ``tests/fixtures/runs/`` (``skill-ab`` and ``three-way``: a sample that needs them
names them by that path, as it would in a clone), and of what ``make run`` leaves: its run of
``experiments/skills_ab.yaml`` under ``runs/`` (variants ``baseline`` and ``with_skill``, the labelled
``skill`` criterion of the trigger dataset), ``runs/latest`` pointing at it, ``runs/history.duckdb``
and its reports in ``reports/``. That run is made once per session, by the command the Makefile's
``run`` target runs, and only for the blocks that read it (they name ``runs/latest``,
``runs/history.duckdb``, ``reports/`` or the folder ``"runs"``; those are slow). Task YAML is written as
``tasks/examples/doc.yaml``, so ``fixtures/...`` paths resolve as in the examples. A shell block
marked ``cwd=repo`` runs in the repository itself instead (commands about the repository's own
files, such as running a test file; they must write nothing there but caches).
"""

from __future__ import annotations

import ast
import asyncio
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests import cli_fork
from tests.demo_figures import DemoRun
from tests.helpers import REPO

DOCS = [
    REPO / "README.md",
    REPO / "CONTRIBUTING.md",
    REPO / "reports" / "README.md",
    *sorted((REPO / "docs").glob("*.md")),
]
FIXTURE_RUNS = REPO / "tests" / "fixtures" / "runs"
FENCE = re.compile(r"^(?P<indent>\s*)(?P<fence>`{3,})(?P<info>.*)$")
YAML_KINDS = ("task", "task-part", "criteria", "experiment", "variant-part", "script")
MINIMAL_TASK = {
    "task_id": "doc",
    "initial_prompt": "p",
    "success_criteria": [{"type": "file_exists", "path": "x"}],
}


@dataclass(frozen=True)
class Block:
    """One fenced block: where it is, its language, its ``key=value`` options, its text."""

    doc: Path
    line: int
    language: str
    options: dict[str, str]
    text: str

    @property
    def id(self) -> str:
        return f"{self.doc.relative_to(REPO)}:{self.line}"


def blocks(doc: Path) -> list[Block]:
    """The fenced blocks of a Markdown file, with their info strings parsed."""
    lines = doc.read_text(encoding="utf-8").splitlines()
    found, i = [], 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if not opening:
            i += 1
            continue
        closing = re.compile(rf"^\s*{opening['fence']}\s*$")
        end = next(j for j in range(i + 1, len(lines)) if closing.match(lines[j]))
        words = shlex.split(opening["info"])
        language = words[0] if words and "=" not in words[0] else ""
        options = dict(w.split("=", 1) for w in words[1 if language else 0 :])
        indent = len(opening["indent"])
        text = "\n".join(line[indent:] for line in lines[i + 1 : end]) + "\n"
        found.append(Block(doc, i + 1, language, options, text))
        i = end + 1
    return found


ALL = [b for doc in DOCS for b in blocks(doc)]


MADE_RUN = re.compile(r"runs/latest|runs/history\.duckdb|reports/|[\"']runs[\"']")
"""What a block reads of the state ``make run`` leaves."""


def reads_made_run(block: Block) -> bool:
    return bool(MADE_RUN.search(block.text))


@pytest.fixture(scope="session")
def made_run(demo_run: DemoRun) -> Path:
    """A folder holding what ``make run`` leaves (runs/, reports/), made once by its command."""
    assert demo_run.exit_code == 0, demo_run.stdout
    return demo_run.folder


@pytest.fixture
def scratch(tmp_path: Path, request: pytest.FixtureRequest) -> Path:
    """The folder a block runs in (see the module docstring)."""
    for name in ("tasks", "experiments"):
        shutil.copytree(REPO / name, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(FIXTURE_RUNS, tmp_path / "tests" / "fixtures" / "runs")
    block = getattr(request, "param", None) or request.node.callspec.params.get("block")
    if isinstance(block, Block) and reads_made_run(block):
        made = request.getfixturevalue("made_run")
        for name in ("runs", "reports"):
            shutil.copytree(made / name, tmp_path / name, symlinks=True)
    if isinstance(block, Block) and block.options.get("needs") == "docker":
        request.getfixturevalue("docker_engine")
    return tmp_path


def test_every_block_is_runnable_or_says_why_not() -> None:
    for block in ALL:
        if "cwd" in block.options:
            assert (block.language, block.options["cwd"]) == ("bash", "repo"), (
                f"{block.id}: cwd=repo, bash only"
            )
        assert block.options.get("needs", "docker") == "docker", f"{block.id}: needs= names docker only"
        reason = block.options.get("norun")
        if reason is not None:
            assert reason.strip(), f"{block.id}: norun needs a reason"
            continue
        assert block.language in ("python", "bash", "yaml", "json"), (
            f'{block.id}: a {block.language or "plain"} block runs nothing: mark it norun="why"'
        )
        if block.language == "yaml":
            assert block.options.get("as") in YAML_KINDS, f"{block.id}: yaml needs as=one of {YAML_KINDS}"


def runnable(*languages: str) -> list[Any]:
    """The blocks to run; those that read ``make run``'s run are slow (it is made first)."""
    return [
        pytest.param(b, id=b.id, marks=[pytest.mark.slow] if reads_made_run(b) else [])
        for b in ALL
        if b.language in languages and "norun" not in b.options
    ]


@pytest.mark.parametrize("block", runnable("python"))
def test_python_sample_runs(block: Block, scratch: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(scratch)
    notebook = block.options.get("cell") == "notebook"
    code = compile(block.text, block.id, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT if notebook else 0)
    result = eval(code, {"__name__": "__doc_sample__"})  # the sample is ours, from the repository
    if asyncio.iscoroutine(result):
        asyncio.run(result)


def commands(text: str) -> list[str]:
    """The commands of a shell block: continued lines joined, blank and comment-only lines dropped."""
    joined = re.sub(r"\\\n\s*", " ", text)
    return [line for line in joined.splitlines() if line.strip() and not line.lstrip().startswith("#")]


MORE_THAN_WORDS = re.compile(r"[|&;<>()$`*?\[\]{}~]")
"""What makes bash do more with a word than pass it on: operators, expansions, globs."""


def coder_eval_words(command: str) -> list[str] | None:
    """The arguments of ``command`` when bash would only split it into words (quotes, a comment) and
    the first is ``coder-eval``; None for anything more (pipes, lists, redirections, expansions,
    globs, a ``#`` inside a word), which bash runs."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    words = list(lexer)
    if re.search(r"\S#", command) or not words or words[0] != "coder-eval":
        return None
    return None if any(MORE_THAN_WORDS.search(word) for word in words) else words[1:]


@pytest.mark.parametrize(
    ("command", "words"),
    [
        (
            "coder-eval run tasks --repeats 2   # run, write runs/<run_id>/",
            ["run", "tasks", "--repeats", "2"],
        ),
        ("coder-eval report runs/latest -p 'title=a b'", ["report", "runs/latest", "-p", "title=a b"]),
        ("coder-eval plan tasks | grep -q x", None),
        ("coder-eval plan tasks && test -d runs", None),
        ("coder-eval plan tasks > plan.txt", None),
        ("coder-eval plan $TASKS", None),
        ("coder-eval plan tasks/*.yaml", None),
        ("coder-eval plan a#b", None),
        ("cd tasks && coder-eval plan .", None),
    ],
)
def test_only_a_coder_eval_command_of_words_alone_is_forked(command: str, words: list[str] | None) -> None:
    assert coder_eval_words(command) == words


@pytest.mark.slow
@pytest.mark.parametrize("block", runnable("bash"))
def test_shell_sample_runs(block: Block, scratch: Path) -> None:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}", "NO_COLOR": "1"}
    env["COLUMNS"] = "200"  # as for every command the tests run (tests.helpers.coder_eval)
    expected = int(block.options.get("exit", "0"))
    cwd = REPO if block.options.get("cwd") == "repo" else scratch
    for command in commands(block.text):
        words = coder_eval_words(command)  # a coder-eval command alone: forked (tests/cli_fork.py)
        result = cli_fork.run(words, cwd, env, 600) if words is not None else None
        if result is None:
            result = subprocess.run(
                ["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True, timeout=600
            )
        assert result.returncode == expected, f"{block.id}: {command}\n{result.stdout}\n{result.stderr}"


@pytest.mark.parametrize("block", runnable("json"))
def test_json_sample_parses(block: Block) -> None:
    json.loads(block.text)


@pytest.mark.parametrize("block", runnable("yaml"))
def test_yaml_sample_loads(block: Block, scratch: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from coder_eval.experiment import load_experiment
    from coder_eval.scripted.script import load_script
    from coder_eval.task import load_tasks

    monkeypatch.chdir(scratch)
    data = yaml.safe_load(block.text)
    kind = block.options["as"]
    if kind in ("task", "task-part", "criteria"):
        over = scratch / block.options.get("over", "tasks/examples/doc.yaml")
        base = yaml.safe_load(over.read_text(encoding="utf-8")) if "over" in block.options else MINIMAL_TASK
        part = data if kind == "task-part" else {"success_criteria": data}
        text = block.text if kind == "task" else yaml.safe_dump({**base, **part}, sort_keys=False)
        path = over.parent / "doc.yaml"
        path.write_text(text, encoding="utf-8")
        assert load_tasks([path])
    elif kind in ("experiment", "variant-part"):
        variant = {"experiment_id": "doc", "variants": [{"variant_id": "v", **(data or {})}]}
        text = block.text if kind == "experiment" else yaml.safe_dump(variant, sort_keys=False)
        path = scratch / "experiments" / "doc.yaml"
        path.write_text(text, encoding="utf-8")
        assert load_experiment(path).variants
    else:
        assert load_script(data)
