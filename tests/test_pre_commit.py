"""``.pre-commit-config.yaml`` runs the checks ``make lint`` runs, and pre-commit accepts it.

The hooks are ``repo: local`` (they download nothing): each runs a tool of the project's ``.venv``.
Here pre-commit itself validates the file, the hooks' commands are compared with the ``lint`` recipe
of the Makefile, and the ruff hooks run for real in a scratch git repository, failing a file that
``make lint`` fails.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from tests.helpers import REPO

CONFIG = REPO / ".pre-commit-config.yaml"
HOOK_ONLY = {"--force-exclude"}
"""Flags a hook adds because pre-commit passes file names (ruff's excludes then need asking for)."""


def lint_commands() -> list[list[str]]:
    """The commands of the Makefile's ``lint`` recipe, as ``[tool, args...]`` without the ``.`` target."""
    text = (REPO / "Makefile").read_text(encoding="utf-8")
    recipe = re.search(r"^lint:.*\n((?:\t.*\n)+)", text, re.MULTILINE)
    assert recipe, "the Makefile has no lint recipe"
    commands = []
    for line in recipe.group(1).splitlines():
        words = shlex.split(line.strip().replace("$(VENV)", ".venv"))
        commands.append([Path(words[0]).name, *(w for w in words[1:] if w != ".")])
    return commands


def hooks() -> list[dict[str, object]]:
    config = yaml.safe_load(CONFIG.read_text(encoding="utf-8"))
    return [hook for repo in config["repos"] for hook in repo["hooks"]]


def hook_command(hook: dict[str, object]) -> list[str]:
    words = shlex.split(str(hook["entry"]))
    assert words[0].startswith(".venv/bin/"), f"{hook['id']}: runs {words[0]}, not the project's .venv tool"
    return [Path(words[0]).name, *(w for w in words[1:] if w not in HOOK_ONLY)]


def pre_commit(*args: str, cwd: Path, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PRE_COMMIT_HOME": str(home), "NO_COLOR": "1"}
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", *args], cwd=cwd, env=env, capture_output=True, text=True
    )


def test_pre_commit_accepts_the_config(tmp_path: Path) -> None:
    result = pre_commit("validate-config", str(CONFIG), cwd=REPO, home=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_hooks_run_the_commands_of_make_lint() -> None:
    assert [hook_command(hook) for hook in hooks()] == lint_commands()
    assert all(hook["language"] == "system" for hook in hooks())  # nothing to download


def git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def test_the_ruff_hooks_fail_a_file_make_lint_fails(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    shutil.copy(CONFIG, repo / CONFIG.name)
    shutil.copy(REPO / "pyproject.toml", repo / "pyproject.toml")
    (repo / ".venv").symlink_to(Path(sys.executable).parent.parent)
    (repo / "good.py").write_text('"""Formatted."""\n\nVALUE = 1\n', encoding="utf-8")
    unformatted = "import os\nVALUE=[1,\n 2]\n"  # and an unused import
    (repo / "bad.py").write_text(unformatted, encoding="utf-8")
    git("init", "-q", cwd=repo)
    git("add", CONFIG.name, "pyproject.toml", "good.py", "bad.py", cwd=repo)
    home = tmp_path / "home"
    for hook in ("ruff-format", "ruff"):
        good = pre_commit("run", hook, "--files", "good.py", cwd=repo, home=home)
        assert good.returncode == 0, good.stdout + good.stderr
        bad = pre_commit("run", hook, "--files", "bad.py", cwd=repo, home=home)
        assert bad.returncode == 1 and "bad.py" in bad.stdout, bad.stdout + bad.stderr
