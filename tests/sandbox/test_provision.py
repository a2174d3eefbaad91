"""Folders at fixed paths: the workspace at the task's ``workdir`` and ``Shown`` folders (``/tests``,
``/logs/verifier``) at theirs, on the drivers that can show them, and a clear refusal where not."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest

from coder_eval.errors import SandboxError
from coder_eval.sandbox import TempdirSandbox, TempdirSpec, WorkspaceFileError
from coder_eval.sandbox.provision import Provision, Shown, fixed_paths_problem
from coder_eval.sandbox.spec import StarterFile, StarterFiles

from .builders import DOCKER, needs_bwrap, run
from .conftest import MakeSandbox

SHOWING = [pytest.param("bwrap", marks=needs_bwrap), DOCKER]
"""The drivers that show folders at fixed paths."""


@pytest.fixture
def tests_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "tests"
    folder.mkdir()
    (folder / "check.sh").write_text("echo checked\n")
    return folder


def snapshot_names(sandbox: object) -> list[str]:
    out = io.BytesIO()
    run(sandbox.snapshot(out))  # type: ignore[attr-defined]
    out.seek(0)
    with tarfile.open(fileobj=out) as tar:
        return sorted(m.name.removeprefix("./") for m in tar.getmembers() if m.isfile())


@pytest.mark.parametrize("driver", SHOWING)
def test_the_workspace_is_seen_at_the_tasks_workdir(make_sandbox: MakeSandbox, driver: str) -> None:
    seed = StarterFiles(files=[StarterFile(path="bin/tool", content="#!/bin/sh\necho tool\n")])
    provision = Provision(sources=(seed,), path_dirs=("bin",))
    sandbox = make_sandbox(driver, provision=provision, workdir="/app")

    seen = run(sandbox.exec('pwd; cat /app/bin/tool | tail -1; tool; echo made > "${APP:-/app}/made.txt"'))
    run(sandbox.exec("mkdir -p sub && echo deep > sub/f.txt"))

    assert sandbox.workdir == "/app"
    assert seen.stdout == "/app\necho tool\ntool\n", seen.output
    assert run(sandbox.read_file("made.txt")) == run(sandbox.read_file("/app/made.txt")) == b"made\n"
    assert run(sandbox.exec("pwd", cwd="/app/sub")).stdout == "/app/sub\n"
    assert run(sandbox.glob("/app/sub/*.txt")) == ["/app/sub/f.txt"]
    assert snapshot_names(sandbox) == ["bin/tool", "made.txt", "sub/f.txt"]


@pytest.mark.parametrize("driver", SHOWING)
def test_shown_folders_are_fresh_writable_copies_outside_the_workspace(
    make_sandbox: MakeSandbox, driver: str, tests_folder: Path
) -> None:
    solution = tests_folder.parent / "solve.sh"
    solution.write_text("echo solved\n")
    provision = Provision(shown=(Shown("/tests", tests_folder), Shown("/solution", solution)))
    sandbox = make_sandbox(driver, provision=provision, workdir="/app", scratch_dirs=["/logs/verifier"])

    ran = run(
        sandbox.exec("bash /tests/check.sh; bash /solution/solve.sh; echo 1 > /logs/verifier/reward.txt")
    )
    run(sandbox.exec("echo changed > /tests/check.sh"))

    assert ran.stdout == "checked\nsolved\n", ran.output
    assert run(sandbox.read_file("/logs/verifier/reward.txt")) == b"1\n"
    assert run(sandbox.glob("/logs/verifier/*")) == ["/logs/verifier/reward.txt"]
    assert (tests_folder / "check.sh").read_text() == "echo checked\n"  # the task's own file is untouched
    assert snapshot_names(sandbox) == []  # nothing shown at a fixed path is part of the workspace
    with pytest.raises(WorkspaceFileError):
        run(sandbox.read_file("/etc/hostname"))


@pytest.mark.parametrize("driver", SHOWING)
def test_a_scratch_folder_starts_empty_in_every_sandbox(make_sandbox: MakeSandbox, driver: str) -> None:
    first = make_sandbox(driver, workdir="/app", scratch_dirs=["/logs/agent"])
    run(first.exec("echo left > /logs/agent/note"))
    second = make_sandbox(driver, workdir="/app", scratch_dirs=["/logs/agent"])

    assert run(second.exec("ls -A /logs/agent")).stdout == ""


@pytest.mark.parametrize("driver", SHOWING)
def test_without_them_nothing_is_shown(make_sandbox: MakeSandbox, driver: str) -> None:
    sandbox = make_sandbox(driver)

    assert run(sandbox.exec("ls -d /tests /solution /logs /app")).exit_code != 0


def test_tempdir_refuses_a_task_that_needs_fixed_paths(tests_folder: Path) -> None:
    provision = Provision(shown=(Shown("/tests", tests_folder),))

    with pytest.raises(SandboxError, match=r"cannot show the workspace at /app, nor /tests, /logs"):
        run(TempdirSandbox.create(TempdirSpec(workdir="/app", scratch_dirs=["/logs"]), provision))


@pytest.mark.parametrize(
    ("driver", "workdir", "targets", "expected"),
    [
        ("tempdir", None, [], None),
        ("bwrap", "/app", ["/tests"], None),
        ("tempdir", None, ["/tests", "/tests"], "cannot show /tests where"),
        ("tempdir", "/app", ["/app"], "cannot show the workspace at /app where"),
    ],
)
def test_what_tempdir_cannot_show_is_named_once(
    driver: str, workdir: str | None, targets: list[str], expected: str | None
) -> None:
    problem = fixed_paths_problem(driver, workdir, targets)
    assert problem == expected or (expected is not None and problem is not None and expected in problem)


@needs_bwrap
@pytest.mark.parametrize("workdir", ["/usr/src/app", "/etc", "/tmp", "/lib/x"])
def test_bwrap_refuses_a_folder_over_what_it_shows_from_the_host(
    make_sandbox: MakeSandbox, workdir: str
) -> None:
    with pytest.raises(SandboxError, match=f"{workdir} overlaps .*read-only"):
        make_sandbox("bwrap", workdir=workdir)


@pytest.mark.docker
def test_docker_refuses_a_shown_folder_over_the_workspace(make_sandbox: MakeSandbox) -> None:
    with pytest.raises(SandboxError, match="/app/logs overlaps the workspace /app"):
        make_sandbox("docker", provision=Provision(shown=(Shown("/app/logs"),)), workdir="/app")
