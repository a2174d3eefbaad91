from __future__ import annotations

import asyncio
import stat
import sys
import time
from pathlib import Path

import pytest

from coder_eval.errors import SandboxError
from coder_eval.sandbox.process import TIMEOUT_EXIT_CODE
from coder_eval.task import SandboxSpec, StarterFile, TemplateSource

from .builders import alive, run
from .conftest import MakeSandbox


@pytest.fixture
def template(tmp_path: Path) -> Path:
    root = tmp_path / "template"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("print('app')\n")
    (root / "README.md").write_text("readme\n")
    (root / "notes.txt").write_text("notes\n")
    return root


def files(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()}


def test_whole_template_dir_is_copied_into_target(make_sandbox: MakeSandbox, template: Path) -> None:
    sandbox = make_sandbox(
        SandboxSpec(template_sources=[TemplateSource(template_dir=str(template), target="app")])
    )

    assert files(sandbox.root) == {"app/src/app.py", "app/README.md", "app/notes.txt"}


def test_plain_starter_paths_copy_only_those(make_sandbox: MakeSandbox, template: Path) -> None:
    source = TemplateSource(template_dir=str(template), starter_files=["src", "README.md"])

    sandbox = make_sandbox(SandboxSpec(template_sources=[source]))

    assert files(sandbox.root) == {"src/app.py", "README.md"}


def test_inline_and_copied_starter_files_with_executable_bit(
    make_sandbox: MakeSandbox, template: Path
) -> None:
    starters = [
        StarterFile(path="bin/run.sh", content="#!/bin/sh\necho ran\n", executable=True),
        StarterFile(path="docs/notes.txt", source=str(template / "notes.txt")),
    ]

    sandbox = make_sandbox(SandboxSpec(template_sources=[TemplateSource(starter_files=starters)]))

    assert (sandbox.root / "docs/notes.txt").read_text() == "notes\n"
    assert run(sandbox.exec("bin/run.sh")).stdout == "ran\n"
    assert not (sandbox.root / "docs/notes.txt").stat().st_mode & stat.S_IXUSR


def test_plain_starter_path_without_template_dir_is_an_error(make_sandbox: MakeSandbox) -> None:
    with pytest.raises(SandboxError, match="no template_dir"):
        make_sandbox(SandboxSpec(template_sources=[TemplateSource(starter_files=["a.txt"])]))


def test_mock_path_dirs_are_executable_and_first_on_path(make_sandbox: MakeSandbox) -> None:
    tool = StarterFile(path="mock_bin/git", content="#!/bin/sh\necho fake git\n")
    spec = SandboxSpec(template_sources=[TemplateSource(starter_files=[tool])], mock_path_dirs=["mock_bin"])

    sandbox = make_sandbox(spec)

    assert run(sandbox.exec("git status")).stdout == "fake git\n"
    assert sandbox.env["PATH"].split(":")[1] == str(sandbox.root / "mock_bin")


def test_missing_mock_path_dir_is_an_error(make_sandbox: MakeSandbox) -> None:
    with pytest.raises(SandboxError, match="mock_path_dirs"):
        make_sandbox(SandboxSpec(mock_path_dirs=["nope"]))


def test_home_and_xdg_dirs_are_inside_the_sandbox_but_outside_root(make_sandbox: MakeSandbox) -> None:
    sandbox = make_sandbox()
    base = sandbox.root.parent

    dirs = run(
        sandbox.exec("echo $HOME $XDG_CONFIG_HOME $XDG_CACHE_HOME $XDG_DATA_HOME $TMPDIR")
    ).stdout.split()

    assert dirs[0] == str(sandbox.home) and sandbox.home.is_dir()
    assert all(Path(d).is_relative_to(base) and not Path(d).is_relative_to(sandbox.root) for d in dirs)
    assert run(sandbox.exec("ls -A")).stdout == ""


def test_host_secrets_are_not_visible(make_sandbox: MakeSandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ANTHROPIC_API_KEY", "AWS_SECRET_ACCESS_KEY", "GITHUB_TOKEN", "ANTHROPIC_BASE_URL"):
        monkeypatch.setenv(name, "bogus")
    sandbox = make_sandbox()

    out = run(sandbox.exec(["env"])).stdout

    assert "bogus" not in out
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


def test_spec_env_then_extra_env_then_call_env(make_sandbox: MakeSandbox) -> None:
    sandbox = make_sandbox(
        SandboxSpec(env={"A": "spec", "B": "spec"}), extra_env={"B": "extra", "C": "extra"}
    )

    out = run(sandbox.exec("echo $A $B $C $D", env={"D": "call"})).stdout

    assert out == "spec extra extra call\n"


def test_python_is_the_running_interpreter(make_sandbox: MakeSandbox) -> None:
    sandbox = make_sandbox()

    out = run(sandbox.exec("python -c 'import sys; print(sys.prefix)'")).stdout

    assert out.strip() == sys.prefix


def test_exit_code_stdout_stderr_and_stdin(make_sandbox: MakeSandbox) -> None:
    sandbox = make_sandbox()

    result = run(sandbox.exec("read line; echo out:$line; echo err >&2; exit 3", stdin="hi\n"))

    assert (result.exit_code, result.stdout, result.stderr, result.timed_out) == (
        3,
        "out:hi\n",
        "err\n",
        False,
    )


def test_argv_is_not_interpreted_by_a_shell(make_sandbox: MakeSandbox) -> None:
    sandbox = make_sandbox()

    assert run(sandbox.exec(["echo", "$HOME", "a;b"])).stdout == "$HOME a;b\n"
    assert run(sandbox.exec(["no-such-program"])).exit_code == 127


def test_invalid_utf8_output_is_replaced(make_sandbox: MakeSandbox) -> None:
    sandbox = make_sandbox()

    assert run(sandbox.exec(r"printf 'a\377b'")).stdout == "a\ufffdb"


def test_timeout_kills_the_whole_process_group_quickly(make_sandbox: MakeSandbox) -> None:
    sandbox = make_sandbox()
    started = time.monotonic()

    result = run(sandbox.exec("sleep 101.25 & sleep 101.25", timeout=1))

    assert time.monotonic() - started < 3
    assert (result.timed_out, result.exit_code) == (True, TIMEOUT_EXIT_CODE)
    assert alive("sleep 101.25") == []


def test_a_group_that_ignores_sigterm_gets_sigkill(make_sandbox: MakeSandbox) -> None:
    sandbox = make_sandbox()

    result = run(sandbox.exec("trap '' TERM; sleep 105.25", timeout=0.3))

    assert result.timed_out and result.duration_s < 2
    assert alive("sleep 105.25") == []


def test_background_child_holding_stdout_does_not_block(make_sandbox: MakeSandbox) -> None:
    sandbox = make_sandbox()
    started = time.monotonic()

    result = run(sandbox.exec("sleep 102.25 & echo started", timeout=10))

    assert (result.stdout, result.timed_out) == ("started\n", False)
    assert time.monotonic() - started < 3
    run(sandbox.close())
    assert alive("sleep 102.25") == []


def test_cancellation_kills_the_process_group(make_sandbox: MakeSandbox) -> None:
    sandbox = make_sandbox()

    async def cancel_soon() -> None:
        task = asyncio.create_task(sandbox.exec("sleep 103.25 & sleep 103.25"))
        await asyncio.sleep(0.3)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    run(cancel_soon())

    assert alive("sleep 103.25") == []


def test_cwd_is_relative_to_root_and_cannot_escape(make_sandbox: MakeSandbox, tmp_path: Path) -> None:
    sandbox = make_sandbox()
    (sandbox.root / "sub").mkdir()
    (sandbox.root / "out").symlink_to(tmp_path)

    assert run(sandbox.exec("pwd", cwd="sub")).stdout.strip() == str(sandbox.root / "sub")
    for escape in ("..", "out", "/etc"):
        with pytest.raises(SandboxError):
            run(sandbox.exec("pwd", cwd=escape))


def test_close_is_idempotent_and_removes_read_only_trees(make_sandbox: MakeSandbox) -> None:
    sandbox = make_sandbox()
    run(sandbox.exec("mkdir -p locked/deep && touch locked/deep/f && chmod -R a-w locked"))
    base = sandbox.root.parent

    run(sandbox.close())
    run(sandbox.close())

    assert not base.exists()
    with pytest.raises(SandboxError, match="closed"):
        run(sandbox.exec("true"))


def test_each_sandbox_is_a_fresh_directory(make_sandbox: MakeSandbox) -> None:
    first, second = make_sandbox(), make_sandbox()

    assert first.root != second.root and list(second.root.iterdir()) == []


def test_stop_processes_kills_leftovers_even_detached_ones(make_sandbox: MakeSandbox) -> None:
    sandbox = make_sandbox()
    run(sandbox.exec("(sleep 106.25 &) ; setsid sleep 107.25 > /dev/null 2>&1 < /dev/null &"))
    deadline = time.monotonic() + 5  # started in the background: give them a moment to exec
    while not (alive("sleep 106.25", within=0) and alive("sleep 107.25", within=0)):
        assert time.monotonic() < deadline, "the background sleeps never started"
        time.sleep(0.05)

    run(sandbox.stop_processes())

    assert alive("sleep 106.25") == [] and alive("sleep 107.25") == []
    assert run(sandbox.exec("echo still usable")).stdout == "still usable\n"
