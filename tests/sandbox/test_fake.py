"""The shipped FakeSandbox: files in memory, commands answered by a handler."""

from __future__ import annotations

import io
import tarfile

import pytest

from coder_eval.errors import WorkspaceFileError
from coder_eval.sandbox import ExecResult, FakeSandbox

from .builders import run


def test_files_glob_and_exec_handler() -> None:
    sandbox = FakeSandbox(
        {"src/a.py": "a", "src/pkg/b.py": b"b", "README.md": "r"},
        on_exec=lambda argv, cwd: ExecResult(0, f"ran {argv[-1]} in {cwd}\n", "", 0.0),
    )
    run(sandbox.write_file("out.txt", "new"))

    assert run(sandbox.read_file("out.txt")) == b"new"
    assert run(sandbox.glob("src/**")) == ["src/a.py", "src/pkg/b.py"]
    assert run(sandbox.glob("src/*.py")) == ["src/a.py"]
    assert run(sandbox.glob("**/*.md")) == ["README.md"]
    assert run(sandbox.exec("make", cwd="src")).stdout == "ran make in src\n"
    assert sandbox.commands == [["/bin/bash", "-c", "make"]]


def test_missing_and_escaping_paths_are_workspace_errors() -> None:
    sandbox = FakeSandbox()

    for bad in ("nope.txt", "../etc/passwd"):
        with pytest.raises(WorkspaceFileError):
            run(sandbox.read_file(bad))
    assert run(sandbox.exec("true")).exit_code == 127


def test_snapshot_is_a_tar_of_the_files() -> None:
    sandbox = FakeSandbox({"a.txt": "1"})
    out = io.BytesIO()

    run(sandbox.snapshot(out))

    with tarfile.open(fileobj=io.BytesIO(out.getvalue())) as tar:
        assert tar.getnames() == ["a.txt"]
