"""Seeding and the environment of host sandboxes (the tempdir driver; bwrap shares this code)."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import TypeAdapter

from coder_eval.errors import SandboxError
from coder_eval.sandbox import SandboxSpec
from coder_eval.sandbox.relay import ptrace_capable
from coder_eval.sandbox.spec import RepoSource, StarterFile, StarterFiles, TemplateDir

from .builders import run
from .conftest import MakeSandbox


@pytest.fixture
def template(tmp_path: Path) -> Path:
    root = tmp_path / "template"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("print('app')\n")
    (root / "README.md").write_text("readme\n")
    (root / "notes.txt").write_text("notes\n")
    return root


def files(root: str) -> set[str]:
    return {str(p.relative_to(root)) for p in Path(root).rglob("*") if p.is_file()}


def test_whole_template_dir_is_copied_to_its_mount_point(make_sandbox: MakeSandbox, template: Path) -> None:
    sandbox = make_sandbox(template_sources=[TemplateDir(path=str(template), mount_point="app")])

    assert files(sandbox.workdir) == {"app/src/app.py", "app/README.md", "app/notes.txt"}


def test_listed_files_copy_only_those(make_sandbox: MakeSandbox, template: Path) -> None:
    sandbox = make_sandbox(template_sources=[TemplateDir(path=str(template), files=["src", "README.md"])])

    assert files(sandbox.workdir) == {"src/app.py", "README.md"}


def test_inline_and_copied_starter_files_with_executable_bit(
    make_sandbox: MakeSandbox, template: Path
) -> None:
    starters = [
        StarterFile(path="bin/run.sh", content="#!/bin/sh\necho ran\n", executable=True),
        StarterFile(path="docs/notes.txt", source=str(template / "notes.txt")),
    ]

    sandbox = make_sandbox(template_sources=[StarterFiles(files=starters)])

    assert (Path(sandbox.workdir) / "docs/notes.txt").read_text() == "notes\n"
    assert run(sandbox.exec("bin/run.sh")).stdout == "ran\n"
    assert not (Path(sandbox.workdir) / "docs/notes.txt").stat().st_mode & stat.S_IXUSR


def test_original_and_older_spellings_load_to_the_same_models(template: Path) -> None:
    adapter: TypeAdapter[object] = TypeAdapter(SandboxSpec)
    original = adapter.validate_python(
        {
            "template_sources": [
                {"type": "template_dir", "path": str(template), "mount_point": "app"},
                {"type": "starter_files", "files": [{"path": "a.txt", "content": "a"}]},
            ],
            "network": "none",
        }
    )
    older = adapter.validate_python(
        {
            "template_sources": [
                {"template_dir": str(template), "target": "app"},
                {"starter_files": [{"path": "a.txt", "content": "a"}]},
            ],
            "network": False,
        }
    )

    assert original == older


def test_a_repo_source_is_cloned_at_its_commit(make_sandbox: MakeSandbox, tmp_path: Path) -> None:
    repo = tmp_path / "origin"
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@e", "-C", str(repo)]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "f.txt").write_text("one\n")
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "one"], check=True)
    first = subprocess.run(
        [*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True
    ).stdout.strip()
    (repo / "f.txt").write_text("two\n")
    subprocess.run([*git, "commit", "-qam", "two"], check=True)

    sandbox = make_sandbox(template_sources=[RepoSource(url=str(repo), commit=first)])

    assert (Path(sandbox.workdir) / "repo/f.txt").read_text() == "one\n"


def test_a_repo_source_that_cannot_be_cloned_is_a_clear_error(
    make_sandbox: MakeSandbox, tmp_path: Path
) -> None:
    with pytest.raises(SandboxError, match=r"cannot clone|failed for"):
        make_sandbox(template_sources=[RepoSource(url=str(tmp_path / "nope"))])


def test_a_repo_source_must_come_first(template: Path) -> None:
    with pytest.raises(ValueError, match="'repo' source must come first"):
        TypeAdapter(SandboxSpec).validate_python(
            {
                "template_sources": [
                    {"type": "template_dir", "path": str(template)},
                    {"type": "repo", "url": "x"},
                ]
            }
        )


def test_mock_path_dirs_are_executable_and_first_on_path(make_sandbox: MakeSandbox) -> None:
    tool = StarterFile(path="mock_bin/git", content="#!/bin/sh\necho fake git\n")

    sandbox = make_sandbox(template_sources=[StarterFiles(files=[tool])], mock_path_dirs=["mock_bin"])

    assert run(sandbox.exec("git status")).stdout == "fake git\n"
    assert sandbox.env["PATH"].split(":")[0] == f"{sandbox.workdir}/mock_bin"


def test_missing_mock_path_dir_is_an_error(make_sandbox: MakeSandbox) -> None:
    with pytest.raises(SandboxError, match="mock_path_dirs"):
        make_sandbox(mock_path_dirs=["nope"])


def test_home_and_xdg_dirs_are_in_the_sandbox_but_outside_the_workspace(make_sandbox: MakeSandbox) -> None:
    sandbox = make_sandbox()
    base = sandbox.layout.base

    dirs = run(
        sandbox.exec("echo $HOME $XDG_CONFIG_HOME $XDG_CACHE_HOME $XDG_DATA_HOME $TMPDIR")
    ).stdout.split()

    assert dirs[0] == str(sandbox.layout.home)
    assert all(Path(d).is_relative_to(base) and not Path(d).is_relative_to(sandbox.workdir) for d in dirs)
    assert run(sandbox.exec("ls -A")).stdout == ""


def test_only_allowlisted_variables_are_set(make_sandbox: MakeSandbox) -> None:
    sandbox = make_sandbox()

    assert set(sandbox.env) <= {
        "PATH",
        "HOME",
        "SHELL",
        "TMPDIR",
        "LANG",
        "LC_ALL",
        "LC_CTYPE",
        "TZ",
        "TERM",
        "CODER_EVAL_SANDBOX",  # this sandbox's marker, to find what its commands left running
    } | {f"XDG_{kind}_HOME" for kind in ("CONFIG", "CACHE", "DATA", "STATE")}


def test_invalid_utf8_output_is_replaced(make_sandbox: MakeSandbox) -> None:
    sandbox = make_sandbox()

    assert run(sandbox.exec(r"printf 'a\377b'")).stdout == "a\ufffdb"


def test_a_sandbox_that_cannot_be_removed_is_a_clear_error(
    make_sandbox: MakeSandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    sandbox = make_sandbox()

    def refuse(path: object, *args: object, **kwargs: object) -> None:
        raise PermissionError(1, "Operation not permitted", str(path))

    monkeypatch.setattr("coder_eval.sandbox.trees._remove_entry", refuse)

    with pytest.raises(SandboxError, match="cannot remove the sandbox"):
        run(sandbox.close())


AN_AGENTS_CLI = r"""
import asyncio, subprocess, sys
from coder_eval.sandbox import Provision
from coder_eval.sandbox.tempdir import TempdirSandbox, TempdirSpec

STDOUT = "import os, stat; print('socket' if stat.S_ISSOCK(os.fstat(1).st_mode) else 'pipe')"
sandbox = asyncio.run(TempdirSandbox.create(TempdirSpec(), Provision()))
try:
    argv = sandbox.wrap([sys.executable, "-I", "-c", STDOUT])
    print(subprocess.run(argv, env=sandbox.env, capture_output=True, text=True, check=True).stdout.strip())
finally:
    asyncio.run(sandbox.close())
"""


@pytest.mark.parametrize("ptrace", [True, False])
def test_an_agents_cli_is_relayed_where_that_closes_its_streams_to_its_tools(ptrace: bool) -> None:
    """With ``CAP_SYS_PTRACE`` the agent's tools could open a relay's streams too: none is started,
    and the CLI writes to the harness's pipe; without it, the CLI's stdout is the relay's socket."""
    if ptrace != ptrace_capable() and (os.geteuid() != 0 or shutil.which("setpriv") is None):
        pytest.skip("cannot run the harness with and without CAP_SYS_PTRACE here")
    drop = [] if ptrace else ["setpriv", "--inh-caps=-sys_ptrace", "--bounding-set=-sys_ptrace", "--"]
    done = subprocess.run(
        [*drop, sys.executable, "-c", AN_AGENTS_CLI], capture_output=True, text=True, timeout=120
    )
    assert done.stdout.strip() == ("pipe" if ptrace else "socket"), done.stderr
