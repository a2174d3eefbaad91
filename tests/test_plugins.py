"""Plugins: a package written from docs/criteria.md and docs/agents.md, installed into a fresh
virtualenv (offline, no build isolation), runs a suite; the loader's anti-shadow rule and its errors."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path
from typing import Any

import pytest

from coder_eval import plugins
from coder_eval.errors import PluginError
from coder_eval.plugins import Builtins, Plugins, Registry
from tests.helpers import REPO, scripted_list_price

PACKAGE = REPO / "tests" / "fixtures" / "plugin_package"

SUITE = """
task_id: notes
initial_prompt: Write notes.md, ten words or more.
agent: {type: acme-writer, model: scripted, max_steps: 4}
scripted:
  model: acme-writer-1
  turns:
    - blocks:
        - text: Writing the notes.
        - tool_use:
            name: Write
            input: {file_path: notes.md, content: "one two three four five six seven eight nine ten"}
    - when: {last_tool_result_contains: wrote notes.md}
      blocks: [{text: "Done: notes.md."}]
success_criteria:
  - {id: words, type: word_count, path: notes.md, min_words: 10}
  - {id: said, type: message_matches, pattern: "Done"}
"""


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtualenv that sees coder_eval's environment and holds acme-eval, built offline from a
    copy of tests/fixtures/plugin_package (the checkout stays clean)."""
    root = tmp_path_factory.mktemp("plugin")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root / "venv")], check=True)
    python = root / "venv" / "bin" / "python"
    site = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
    )
    (site / "coder_eval_env.pth").write_text(
        f"import site; site.addsitedir({sysconfig.get_paths()['purelib']!r})\n"
    )
    source = shutil.copytree(PACKAGE, root / "acme-eval")
    install = [
        sys.executable,
        "-m",
        "pip",
        "install",
        "-q",
        "--no-deps",
        "--no-build-isolation",
        "--no-index",
    ]
    env = {**os.environ, "PIP_CONFIG_FILE": os.devnull}
    result = subprocess.run(
        [*install, "--target", str(site), str(source)], capture_output=True, text=True, env=env
    )
    assert result.returncode == 0, result.stderr
    return python


def coder_eval(python: Path, cwd: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    clean |= {"NO_COLOR": "1", "COLUMNS": "200", **env}
    return subprocess.run(
        [str(python), "-m", "coder_eval", *args],
        cwd=cwd,
        env=clean,
        capture_output=True,
        text=True,
        timeout=600,
    )


def suite(folder: Path, body: str = SUITE) -> Path:
    (folder / "tasks").mkdir(parents=True, exist_ok=True)
    (folder / "tasks" / "notes.yaml").write_text(textwrap.dedent(body).lstrip(), encoding="utf-8")
    return folder / "tasks"


@pytest.mark.slow
def test_an_installed_plugin_package_runs_a_suite_with_its_agent_criterion_and_price(
    venv: Path, tmp_path: Path
) -> None:
    tasks = suite(tmp_path)

    result = coder_eval(
        venv, tmp_path, "run", str(tasks), "--run-dir", "run", "--no-report", "--driver", "tempdir"
    )

    assert result.returncode == 0, result.stdout + result.stderr
    (episode,) = (tmp_path / "run" / "episodes").glob("*.jsonl")
    events = [json.loads(line) for line in episode.read_text().splitlines()]
    criteria = {e["criterion_id"]: e for e in events if e["type"] == "criterion"}
    end = events[-1]
    assert events[0]["agent"]["type"] == "acme-writer" and events[0]["agent"]["max_steps"] == 4
    assert criteria["words"]["kind"] == "word_count" and criteria["words"]["details"] == {"words": 10}
    assert criteria["words"]["passed"] and criteria["said"]["passed"]
    assert [e["name"] for e in events if e["type"] == "tool_call"] == ["Write"]
    usage = end["usage"]  # priced by the plugin's register(registry): acme-writer-1 at $2 / $8
    listed = (usage["input_tokens"] * 2 + usage["output_tokens"] * 8) / 1e6
    assert end["cost_usd"] == 0.0  # a scripted model has no price; the note keeps the list price
    assert scripted_list_price(end["notes"]) == pytest.approx(listed, abs=5e-5)


@pytest.mark.slow
def test_a_plugin_criterion_field_typo_gets_a_did_you_mean(venv: Path, tmp_path: Path) -> None:
    tasks = suite(tmp_path, SUITE.replace("min_words: 10", "min_word: 10"))

    result = coder_eval(venv, tmp_path, "validate", str(tasks))

    assert result.returncode == 2
    assert "success_criteria[0].min_word: unknown field (did you mean 'min_words'?)" in result.stderr


@pytest.mark.slow
def test_a_broken_plugin_is_named_and_nothing_runs(venv: Path, tmp_path: Path) -> None:
    tasks = suite(tmp_path)

    result = coder_eval(venv, tmp_path, "plan", str(tasks), ACME_EVAL_BROKEN="1")

    assert result.returncode == 2, result.stdout
    assert (
        "plugin 'acme' (acme_eval.plugin:register, package acme-eval 0.1.0) in coder_eval.plugins"
        in result.stderr
    )
    assert "failed to load: RuntimeError: acme-eval cannot find its licence file" in result.stderr
    assert "Traceback" not in result.stderr and "AssertionError" not in result.stderr


def test_the_docs_show_the_plugin_package_as_it_is() -> None:
    docs = (REPO / "docs" / "criteria.md").read_text(encoding="utf-8") + (
        REPO / "docs" / "agents.md"
    ).read_text(encoding="utf-8")
    for name in ("acme_eval/criteria.py", "acme_eval/agent.py", "acme_eval/plugin.py", "pyproject.toml"):
        text = (PACKAGE / name).read_text(encoding="utf-8")
        assert text in docs, (
            f"docs/criteria.md or docs/agents.md must show tests/fixtures/plugin_package/{name}"
        )


class Spec:
    """Stands in for a criterion class in the registry's table (identity is what is compared)."""


def registry(found: Plugins, source: str = "'b' (b.plugin:register)") -> Registry:
    from coder_eval.criteria import CriterionSpec

    return Registry(found, source, Builtins({"file_exists"}, {"codex"}, criterion_base=CriterionSpec))


def test_a_plugin_cannot_shadow_a_built_in_or_another_plugins_name() -> None:
    from coder_eval.criteria import CriterionSpec

    class Mine(CriterionSpec):
        type: Any = "file_exists"

    found = Plugins()
    with pytest.raises(TypeError, match="declare type: Literal"):
        registry(found).criterion(Mine)
    with pytest.raises(TypeError, match=r"is not a criterion: subclass coder_eval\.criteria\.CriterionSpec"):
        registry(found).criterion(Spec)  # the base class comes from the criteria table
    with pytest.raises(ValueError, match="agent codex would shadow coder_eval's built-in agent codex"):
        registry(found).agent("codex", "b.agent:Codex")
    registry(found, "'a' (a.plugin:register)").agent("acme", "a.agent:Acme")
    registry(found).agent("acme", "a.agent:Acme")  # the same thing again is harmless
    with pytest.raises(
        ValueError, match=r"agent acme is already registered by plugin 'a' \(a.plugin:register\)"
    ):
        registry(found).agent("acme", "b.agent:Other")


def test_every_broken_entry_point_is_a_named_problem(monkeypatch: pytest.MonkeyPatch) -> None:
    from importlib.metadata import EntryPoint

    points = {
        "coder_eval.criteria": [
            EntryPoint("gone", "no_such_module:Gone", "coder_eval.criteria"),
            EntryPoint("misnamed", "coder_eval.criteria.file_exists:FileExists", "coder_eval.criteria"),
        ],
        "coder_eval.plugins": [EntryPoint("odd", "json:dumps", "coder_eval.plugins")],
    }
    monkeypatch.setattr(plugins, "entry_points", lambda group: points.get(group, []))
    monkeypatch.setattr(plugins, "_state", None)

    gone, misnamed, odd = plugins.load_plugins(Builtins(["file_exists"], ["codex"])).problems

    assert (
        "plugin 'gone' (no_such_module:Gone) in coder_eval.criteria failed to load: ModuleNotFoundError"
        in gone
    )
    assert "the entry point's name is the kind: name it 'file_exists'" in misnamed
    assert "plugin 'odd' (json:dumps) in coder_eval.plugins failed to load: TypeError" in odd
    with pytest.raises(PluginError, match="Fix or uninstall the package that provides it"):
        plugins.check_plugins()


def test_a_plugin_criterion_or_agent_that_crashes_is_named_with_the_line_that_raised(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import asyncio
    from typing import Literal

    from coder_eval.criteria import CriterionSpec, GradingContext, Verdict
    from coder_eval.episode import agent_phase, grading
    from coder_eval.errors import AgentError
    from coder_eval.sandbox import FakeSandbox

    class Crashing(CriterionSpec):
        type: Literal["crashing"] = "crashing"

        async def evaluate(self, ctx: GradingContext) -> Verdict:
            if not ctx.final_message:
                raise AssertionError  # what a bare assert raises outside pytest
            return Verdict(score=1.0)

    async def agent_run() -> Any:
        raise AssertionError

    found = Plugins(owners={"criterion crashing": "'acme' (acme_eval.plugin:register)"})
    monkeypatch.setattr(plugins, "_state", found)
    monkeypatch.setattr(grading, "PLUGIN_CRITERIA", {"crashing": Crashing})
    ctx = GradingContext(FakeSandbox(), [], Path())

    result = asyncio.run(grading._verdict(Crashing(), "0-crashing", ctx))

    owner = re.escape("criterion crashing (plugin 'acme' (acme_eval.plugin:register))")
    pattern = (
        owner
        + r" raised AssertionError: \(no message\) at .*test_plugins\.py:\d+: raise AssertionError  # what.*"
    )
    assert result.error is not None and re.fullmatch(pattern, result.error), result.error
    with pytest.raises(
        AgentError,
        match=r"agent acme-x raised AssertionError: \(no message\) at .*py:\d+: raise AssertionError$",
    ):
        asyncio.run(agent_phase._named("acme-x", agent_run()))
