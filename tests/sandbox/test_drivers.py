"""The sandbox verbs behave the same on every host driver."""

from __future__ import annotations

import asyncio
import io
import sys
import tarfile
import time
from pathlib import Path

import pytest
from pydantic import TypeAdapter, ValidationError

from coder_eval.errors import SandboxError, WorkspaceFileError
from coder_eval.sandbox import DRIVERS, AutoSpec, BwrapSandbox, SandboxSpec, TempdirSandbox
from coder_eval.sandbox import make_sandbox as make_any
from coder_eval.sandbox.process import TIMEOUT_EXIT_CODE
from coder_eval.sandbox.provision import Provision
from coder_eval.sandbox.spec import Limits

from .builders import BWRAP_PROBLEM, DRIVER_NAMES, alive, host_folder, run, wait_alive
from .conftest import MakeSandbox

pytestmark = pytest.mark.parametrize("driver", DRIVER_NAMES)


def test_exit_code_stdout_stderr_and_stdin(make_sandbox: MakeSandbox, driver: str) -> None:
    sandbox = make_sandbox(driver)

    result = run(sandbox.exec("read line; echo out:$line; echo err >&2; exit 3", stdin="hi\n"))

    assert (result.exit_code, result.stdout, result.stderr, result.timed_out) == (
        3,
        "out:hi\n",
        "err\n",
        False,
    )


def test_argv_is_not_interpreted_by_a_shell(make_sandbox: MakeSandbox, driver: str) -> None:
    sandbox = make_sandbox(driver)

    assert run(sandbox.exec(["echo", "$HOME", "a;b"])).stdout == "$HOME a;b\n"
    assert run(sandbox.exec(["no-such-program"])).exit_code == 127


def test_commands_start_in_the_workspace_and_cwd_cannot_escape(
    make_sandbox: MakeSandbox, driver: str, tmp_path: Path
) -> None:
    sandbox = make_sandbox(driver)
    run(sandbox.exec(["mkdir", "sub"]))
    run(sandbox.exec(["ln", "-s", str(tmp_path), "out"]))

    assert run(sandbox.exec("pwd")).stdout.strip() == sandbox.workdir
    assert run(sandbox.exec("pwd", cwd="sub")).stdout.strip() == f"{sandbox.workdir}/sub"
    for escape in ("..", "out", "/etc"):
        with pytest.raises(SandboxError):
            run(sandbox.exec("pwd", cwd=escape))


def test_read_write_and_glob(make_sandbox: MakeSandbox, driver: str) -> None:
    sandbox = make_sandbox(driver)
    run(sandbox.write_file("src/app.py", "print('hi')\n"))
    run(sandbox.write_file("src/pkg/util.py", b"x = 1\n"))
    run(sandbox.write_file("run.sh", "#!/bin/sh\necho ran\n", executable=True))

    assert run(sandbox.read_file("src/app.py")) == b"print('hi')\n"
    assert run(sandbox.read_file("src/app.py", limit=5)) == b"print"
    assert run(sandbox.glob("src/**")) == ["src/app.py", "src/pkg/util.py"]
    assert run(sandbox.glob("**/*.py")) == ["src/app.py", "src/pkg/util.py"]
    assert run(sandbox.glob("src/*.py")) == ["src/app.py"]
    assert run(sandbox.glob("./src//*.py")) == ["src/app.py"]  # '.' and empty steps say nothing
    assert run(sandbox.glob(".")) == []  # the workspace is a folder, not a file
    assert run(sandbox.exec("./run.sh")).stdout == "ran\n"


def test_reads_never_leave_the_workspace(make_sandbox: MakeSandbox, driver: str, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("host secret\n")
    sandbox = make_sandbox(driver)
    run(sandbox.exec(["ln", "-s", str(secret), "link.txt"]))
    run(sandbox.exec("mkdir d && ln -s .. d/up && ln -s /etc etc"))

    for bad in ("link.txt", "../secret.txt", "missing.txt", "d"):
        with pytest.raises(WorkspaceFileError):
            run(sandbox.read_file(bad))
    assert run(sandbox.glob("*")) == []  # links are not files of the workspace
    assert run(sandbox.glob("*", include_links=True)) == ["etc", "link.txt"]
    assert run(sandbox.glob("etc/*")) == []


def test_snapshot_is_a_tar_of_the_workspace_honouring_ignore_patterns(
    make_sandbox: MakeSandbox, driver: str
) -> None:
    sandbox = make_sandbox(driver)
    run(
        sandbox.exec(
            "mkdir -p node_modules/x logs && echo a > a.txt && echo b > node_modules/x/b && "
            "echo l > logs/debug.log && echo k > logs/keep.log && ln -s a.txt link && mkfifo pipe"
        )
    )
    out = io.BytesIO()

    run(sandbox.snapshot(out, ignore=["node_modules/", "*.log", "!keep.log"]))

    with tarfile.open(fileobj=io.BytesIO(out.getvalue())) as tar:
        names = sorted(tar.getnames())
        assert tar.getmember("link").issym()
    assert names == ["a.txt", "link", "logs", "logs/keep.log"]


def test_timeout_kills_everything_the_command_started(make_sandbox: MakeSandbox, driver: str) -> None:
    sandbox = make_sandbox(driver)
    started = time.monotonic()

    result = run(sandbox.exec("sleep 101.25 & sleep 101.25", timeout=1))

    assert time.monotonic() - started < 4
    assert (result.timed_out, result.exit_code) == (True, TIMEOUT_EXIT_CODE)
    assert alive("sleep 101.25") == []


def test_a_command_ignoring_sigterm_gets_sigkill(make_sandbox: MakeSandbox, driver: str) -> None:
    sandbox = make_sandbox(driver)

    result = run(sandbox.exec("trap '' TERM; sleep 105.25", timeout=0.3))

    assert result.timed_out and result.duration_s < 3
    assert alive("sleep 105.25") == []


def test_background_child_holding_stdout_does_not_block(make_sandbox: MakeSandbox, driver: str) -> None:
    sandbox = make_sandbox(driver)
    started = time.monotonic()

    result = run(sandbox.exec("sleep 102.25 & echo started", timeout=10))

    assert (result.stdout, result.timed_out) == ("started\n", False)
    assert time.monotonic() - started < 4
    run(sandbox.stop())
    assert alive("sleep 102.25") == []


def test_cancellation_kills_the_command(make_sandbox: MakeSandbox, driver: str) -> None:
    sandbox = make_sandbox(driver)

    async def cancel_soon() -> None:
        task = asyncio.create_task(sandbox.exec("sleep 103.25 & sleep 103.25"))
        await asyncio.sleep(0.5)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    run(cancel_soon())

    assert alive("sleep 103.25") == []


def test_stop_kills_detached_leftovers(make_sandbox: MakeSandbox, driver: str) -> None:
    sandbox = make_sandbox(driver)
    run(sandbox.exec("(sleep 106.25 &) ; setsid env -i /bin/sleep 107.25 > /dev/null 2>&1 < /dev/null &"))
    if driver == "tempdir":  # under bwrap nothing outlives the command: the kernel ends its namespace
        wait_alive("sleep 107.25")

    run(sandbox.stop())

    assert alive("sleep 106.25") == [] and alive("sleep 107.25") == []
    assert run(sandbox.exec("echo still usable")).stdout == "still usable\n"


def test_close_is_idempotent_and_removes_read_only_trees(make_sandbox: MakeSandbox, driver: str) -> None:
    sandbox = make_sandbox(driver)
    run(sandbox.exec("mkdir -p locked/deep && touch locked/deep/f && chmod -R a-w locked"))
    base = host_folder(sandbox)

    run(sandbox.close())
    run(sandbox.close())

    assert not base.exists()
    with pytest.raises(SandboxError, match="closed"):
        run(sandbox.exec("true"))


def test_each_sandbox_is_a_fresh_directory(make_sandbox: MakeSandbox, driver: str) -> None:
    first, second = make_sandbox(driver), make_sandbox(driver)
    run(first.write_file("mine.txt", "1"))

    assert host_folder(first) != host_folder(second) and run(second.glob("**")) == []


def test_host_secrets_are_not_in_the_environment(
    make_sandbox: MakeSandbox, driver: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("ANTHROPIC_API_KEY", "AWS_SECRET_ACCESS_KEY", "GITHUB_TOKEN"):
        monkeypatch.setenv(name, "bogus-canary")
    sandbox = make_sandbox(driver)

    assert "bogus-canary" not in run(sandbox.exec(["env"])).stdout


def test_spec_env_then_call_env(make_sandbox: MakeSandbox, driver: str) -> None:
    sandbox = make_sandbox(driver, env={"A": "spec", "B": "spec"})

    assert run(sandbox.exec("echo $A $B", env={"B": "call"})).stdout == "spec call\n"


def test_the_driver_table_is_the_spec_union(driver: str) -> None:
    adapter: TypeAdapter[object] = TypeAdapter(SandboxSpec)

    assert type(adapter.validate_python({"driver": driver})) is DRIVERS[driver][0]
    assert type(adapter.validate_python({})) is AutoSpec
    with pytest.raises(ValidationError, match="unknown sandbox driver; valid: auto, tempdir, bwrap"):
        adapter.validate_python({"driver": "docker-ish"})


def test_auto_uses_bwrap_where_it_runs(tmp_path: Path, driver: str) -> None:
    sandbox = run(make_any(AutoSpec(), Provision(), base_dir=tmp_path))
    try:
        expected = TempdirSandbox if BWRAP_PROBLEM else BwrapSandbox
        assert type(sandbox) is expected
    finally:
        run(sandbox.close())


def test_python_on_path_is_the_running_interpreter(make_sandbox: MakeSandbox, driver: str) -> None:
    sandbox = make_sandbox(driver)

    out = run(sandbox.exec("python -c 'import sys; print(sys.prefix)'")).stdout

    assert out.strip() == sys.prefix


def test_a_fork_refused_at_the_process_limit_is_counted(make_sandbox: MakeSandbox, driver: str) -> None:
    sandbox = make_sandbox(driver, limits=Limits(max_pids=16))
    flood = "import os, time\nfor _ in range(64):\n    if os.fork() == 0:\n        time.sleep(3); os._exit(0)"

    result = run(sandbox.exec(["python", "-c", flood]))
    run(sandbox.stop())

    assert result.exit_code != 0 and "BlockingIOError" in result.stderr
    if getattr(sandbox, "cgroup", True) is not None:  # counted by the sandbox's (or container's) group
        assert sandbox.limits_hit() == ["processes"]
