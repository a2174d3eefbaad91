"""The tests' forked ``coder-eval`` commands (``tests/cli_fork.py``) answer as fresh interpreters do."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import MappingProxyType

import pytest

from tests import cli_fork
from tests.helpers import EXAMPLES, coder_eval, write_task

NONE: Mapping[str, str] = MappingProxyType({})

SLOW = """
task_id: slow
initial_prompt: wait
agent: {kind: command, command: "sleep 60"}
sandbox: {driver: tempdir}
success_criteria:
  - {type: file_exists, path: never.txt}
"""


@pytest.fixture(scope="module")
def module_servers() -> Iterator[dict[cli_fork.Startup, cli_fork.Server]]:
    """Fork servers this module's tests share, started by the first test that forks a command and
    ended after the last (each server's start-up imports take seconds)."""
    servers: dict[cli_fork.Startup, cli_fork.Server] = {}
    yield servers
    cli_fork.stop(servers)


@pytest.fixture(autouse=True)
def shared_servers(
    monkeypatch: pytest.MonkeyPatch, module_servers: dict[cli_fork.Startup, cli_fork.Server]
) -> dict[cli_fork.Startup, cli_fork.Server]:
    """This module's servers, whatever this test process ran before (the servers of its other
    tests are left as they are, unused meanwhile), and no failure left by another module."""
    monkeypatch.setattr(cli_fork, "_servers", module_servers)
    monkeypatch.setattr(cli_fork, "failure", None)
    monkeypatch.delenv("CODER_EVAL_TEST_FORK", raising=False)
    return module_servers


@pytest.fixture
def own_servers(
    monkeypatch: pytest.MonkeyPatch, shared_servers: dict[cli_fork.Startup, cli_fork.Server]
) -> Iterator[dict[cli_fork.Startup, cli_fork.Server]]:
    """Fork servers of this test alone (none started yet), ended after it."""
    servers: dict[cli_fork.Startup, cli_fork.Server] = {}
    monkeypatch.setattr(cli_fork, "_servers", servers)
    yield servers
    cli_fork.stop()


def fresh(*args: str, cwd: Path, startup: Mapping[str, str] = NONE) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **startup, "CODER_EVAL_TEST_FORK": "0"}
    return coder_eval(*args, cwd=cwd, env=env, columns=int(startup.get("COLUMNS", "200")))


def command_env(**more: str) -> dict[str, str]:
    """This process's environment as the tests' commands get it, with ``more``."""
    return {**os.environ, "COLUMNS": "200", "NO_COLOR": "1", **more}


def forked(
    *args: str, cwd: Path, timeout: float = 300, startup: Mapping[str, str] = NONE
) -> subprocess.CompletedProcess[str]:
    done = cli_fork.run(args, cwd, command_env(**startup), timeout)
    assert done is not None, f"the fork server did not take the command: {cli_fork.failure}"
    return done


@pytest.mark.parametrize(
    "args",
    [
        ("plan", str(EXAMPLES)),
        ("validate", str(EXAMPLES / "write_file.yaml")),
        ("run", "no-such-folder"),
        ("show", "runs/latest"),
        ("no-such-command",),
    ],
)
def test_a_forked_command_prints_and_exits_as_a_fresh_one(args: tuple[str, ...], tmp_path: Path) -> None:
    want = fresh(*args, cwd=tmp_path)
    got = forked(*args, cwd=tmp_path)
    assert (got.returncode, got.stdout, got.stderr) == (want.returncode, want.stdout, want.stderr)


def test_a_forked_run_writes_its_run_in_its_own_folder_and_environment(tmp_path: Path) -> None:
    write_task(
        tmp_path / "tasks",
        "task_id: t\ninitial_prompt: x\nreference_solution: echo ok > ok.txt\n"
        "success_criteria: [{type: file_contains, path: ok.txt, includes: [ok]}]\n",
    )
    env = command_env(CODER_EVAL_STORE=str(tmp_path / "store.duckdb"))
    done = cli_fork.run(("run", "tasks", "--agent", "oracle", "--no-report"), tmp_path, env, 300)
    assert done is not None and done.returncode == 0, done and done.stderr
    assert (tmp_path / "runs" / "latest" / "run.json").is_file()
    assert (tmp_path / "store.duckdb").is_file()  # the command's environment, not the server's


def test_a_command_past_its_timeout_is_killed_and_the_next_one_runs(tmp_path: Path) -> None:
    write_task(tmp_path / "tasks", SLOW)
    with pytest.raises(subprocess.TimeoutExpired):
        forked("run", "tasks", "--no-report", cwd=tmp_path, timeout=3)
    assert forked("--version", cwd=tmp_path).returncode == 0


@pytest.mark.parametrize(
    "startup", [{"COLUMNS": "60"}, {"PYTHONIOENCODING": "ascii"}], ids=["narrow", "ascii"]
)
def test_a_command_with_other_start_up_variables_is_forked_from_a_server_started_with_them(
    tmp_path: Path, startup: dict[str, str], own_servers: dict[cli_fork.Startup, cli_fork.Server]
) -> None:
    assert forked("--version", cwd=tmp_path).returncode == 0
    want = fresh("--help", cwd=tmp_path, startup=startup)
    got = forked("--help", cwd=tmp_path, startup=startup)

    assert (got.returncode, got.stdout, got.stderr) == (want.returncode, want.stdout, want.stderr)
    assert got.stdout != fresh("--help", cwd=tmp_path).stdout  # the variables change what it prints
    assert len(own_servers) == 2


def test_past_its_servers_a_process_runs_commands_fresh(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, own_servers: dict[cli_fork.Startup, cli_fork.Server]
) -> None:
    monkeypatch.setattr(cli_fork, "SERVERS", 1)
    env = command_env()

    assert cli_fork.run(("--version",), tmp_path, env, 60) is not None
    assert cli_fork.run(("--version",), tmp_path, {**env, "COLUMNS": "60"}, 60) is None
    assert cli_fork.run(("--version",), tmp_path, env, 60) is not None
    assert len(own_servers) == 1


def test_a_server_that_cannot_start_says_why_and_leaves_the_commands_to_fresh_interpreters(
    tmp_path: Path, own_servers: dict[cli_fork.Startup, cli_fork.Server]
) -> None:
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "sitecustomize.py").write_text(
        "import os\nos.write(2, b'this interpreter will not start\\n')\nos._exit(3)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "site")}

    with pytest.warns(UserWarning, match="coder-eval commands run in fresh interpreters"):
        assert cli_fork.run(("--version",), tmp_path, env, 60) is None
    assert cli_fork.failure is not None
    assert "exited (3)" in cli_fork.failure and "this interpreter will not start" in cli_fork.failure
    assert cli_fork.run(("--version",), tmp_path, {**os.environ}, 60) is None  # none is tried again
    assert coder_eval("--version", cwd=tmp_path).returncode == 0  # the helper starts a fresh interpreter


@pytest.mark.parametrize("pidfd", [True, False], ids=["pidfd", "polled"])
def test_the_server_waits_for_a_command_and_kills_it_past_its_timeout(
    pidfd: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not pidfd:

        def refused(pid: int, flags: int = 0) -> int:
            raise OSError(errno.ENOSYS, "pidfd_open")

        monkeypatch.setattr(os, "pidfd_open", refused)
    quick = os.posix_spawn("/bin/sh", ["sh", "-c", "exit 4"], os.environ)
    slow = os.posix_spawn("/bin/sleep", ["sleep", "30"], os.environ)

    assert cli_fork.wait(quick, 30) == {"returncode": 4, "timed_out": False}
    assert cli_fork.wait(slow, 0.2) == {"returncode": -signal.SIGKILL, "timed_out": True}
