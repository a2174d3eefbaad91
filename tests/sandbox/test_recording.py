"""Recorded CLIs: the harness makes and records every call; nothing the agent writes changes a record."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import pytest

from coder_eval.sandbox import HostSandbox, RecordingHost
from coder_eval.sandbox.recording import (
    MAX_ARGV_BYTES,
    MAX_CONNECTIONS,
    REQUEST_CAP_BYTES,
    STDOUT_CAP_BYTES,
    ShimCall,
)
from coder_eval.sandbox.spec import CliRecorder, StarterFile, StarterFiles

from .builders import DRIVER_NAMES, HOST_DRIVERS, host_folder, run
from .conftest import MakeSandbox

T = TypeVar("T")
FAKE_GH = """#!/bin/sh
if [ "$1" = fail ]; then echo nope >&2; exit 4; fi
if [ "$1" = big ]; then head -c 20000 /dev/zero | tr '\\0' x; exit 0; fi
if [ "$1" = stdin ]; then cat; exit 0; fi
if [ "$1" = env ]; then echo "token=$GH_TOKEN"; exit 0; fi
if [ "$1" = touch ]; then : > ran; exit 0; fi
if [ "$1" = slow ]; then sleep 1; exit 0; fi
echo "{\\"method\\": \\"POST\\", \\"args\\": \\"$*\\"}"
"""


def recorded(make_sandbox: MakeSandbox, driver: str, *recorders: CliRecorder) -> HostSandbox:
    fake = StarterFile(path="mock_bin/gh", content=FAKE_GH, executable=True)
    return make_sandbox(
        driver,
        template_sources=[StarterFiles(files=[fake])],
        shims=list(recorders) or [CliRecorder(name="gh", target="mock_bin/gh")],
    )


def with_host(
    sandbox: HostSandbox,
    step: Callable[[], Awaitable[T]],
    on_call: Callable[[ShimCall], None] | None = None,
) -> tuple[T, list[ShimCall]]:
    """Run ``step`` while the sandbox's recorder is listening; returns its result and the records."""

    async def scenario() -> tuple[T, list[ShimCall]]:
        host = RecordingHost(sandbox, sandbox.spec.recorders, on_call=on_call)
        await host.start(sandbox.host_socket("recorder"))
        try:
            return await step(), host.calls
        finally:
            await host.stop()

    return run(scenario())


@pytest.mark.parametrize("driver", DRIVER_NAMES)
def test_call_runs_the_target_and_is_recorded(make_sandbox: MakeSandbox, driver: str) -> None:
    sandbox = recorded(make_sandbox, driver)
    run(sandbox.exec("mkdir repo"))

    result, [call] = with_host(sandbox, lambda: sandbox.exec("gh pr create --title 'a b'", cwd="repo"))

    assert json.loads(result.stdout) == {"method": "POST", "args": "pr create --title a b"}
    assert call.argv == ("gh", "pr", "create", "--title", "a b")
    assert (call.cwd, call.exit_code, call.stdout, call.stdout_truncated) == ("repo", 0, result.stdout, False)


@pytest.mark.parametrize("driver", DRIVER_NAMES)
def test_exit_code_stderr_stdin_and_environment_pass_through(make_sandbox: MakeSandbox, driver: str) -> None:
    sandbox = recorded(make_sandbox, driver)

    async def calls() -> list[Any]:
        return [
            await sandbox.exec("gh fail"),
            await sandbox.exec("gh stdin", stdin="body\n"),
            await sandbox.exec("GH_TOKEN=t0k gh env"),
        ]

    (fail, stdin, env), records = with_host(sandbox, calls)

    assert (fail.exit_code, fail.stderr) == (4, "nope\n")
    assert stdin.stdout == "body\n" and env.stdout == "token=t0k\n"
    assert [c.exit_code for c in records] == [4, 0, 0]


def test_recorded_stdout_is_capped_but_fully_passed_through(make_sandbox: MakeSandbox) -> None:
    sandbox = recorded(make_sandbox, "tempdir")

    result, [call] = with_host(sandbox, lambda: sandbox.exec("gh big"))

    assert len(result.stdout) == 20000
    assert len(call.stdout) == STDOUT_CAP_BYTES and call.stdout_truncated


def test_canned_answers_need_no_program(make_sandbox: MakeSandbox) -> None:
    kubectl = CliRecorder(tool="kubectl", exit_code=0, stdout="deployed\n")
    sandbox = make_sandbox(record_cli=[kubectl])

    result, [call] = with_host(sandbox, lambda: sandbox.exec("kubectl apply -f x.yaml"))

    assert (result.exit_code, result.stdout) == (0, "deployed\n")
    assert call.argv == ("kubectl", "apply", "-f", "x.yaml")


@pytest.mark.parametrize("driver", DRIVER_NAMES)
def test_responses_answer_each_call_by_what_it_asks(make_sandbox: MakeSandbox, driver: str) -> None:
    uip = CliRecorder.model_validate(
        {
            "tool": "uip",
            "stderr": "uip: unknown command\n",
            "responses": [
                {"when": {"verb": "projects list"}, "stdout": "web\napi\n"},
                {
                    "when": {"verb": "deploy", "flags": {"env": {"equals": "prod"}}},
                    "exit_code": 3,
                    "stderr": "no\n",
                },
                {"when": {"verb": "deploy"}, "stdout": "deployed\n"},
            ],
        }
    )
    sandbox = make_sandbox(driver, record_cli=[uip])

    async def calls() -> list[Any]:
        commands = ["uip projects list", "uip deploy web --env prod", "uip deploy web --env dev", "uip login"]
        return [await sandbox.exec(command) for command in commands]

    results, records = with_host(sandbox, calls)

    answers = [(r.exit_code, r.stdout, r.stderr) for r in results]
    assert answers == [
        (0, "web\napi\n", ""),
        (3, "", "no\n"),
        (0, "deployed\n", ""),
        (1, "", "uip: unknown command\n"),
    ]
    assert [c.exit_code for c in records] == [0, 3, 0, 1]


def test_responses_are_checked_when_the_task_loads() -> None:
    with pytest.raises(ValueError, match="give one check per flag"):
        CliRecorder.model_validate(
            {"tool": "uip", "responses": [{"when": {"flags": {"env": {"equals": "a", "absent": True}}}}]}
        )
    with pytest.raises(ValueError, match="a recorder with a target runs it instead"):
        CliRecorder.model_validate(
            {"name": "uip", "target": "bin/uip", "responses": [{"when": {"verb": "x"}}]}
        )


def test_the_workspace_log_is_a_copy_the_agent_cannot_forge_records_through(
    make_sandbox: MakeSandbox,
) -> None:
    sandbox = make_sandbox(record_cli=[CliRecorder(tool="kubectl", exit_code=1)])
    forged = json.dumps({"name": "kubectl", "argv": ["kubectl", "rollout"], "exit_code": 0})

    async def agent() -> None:
        await sandbox.exec("kubectl apply")
        await sandbox.exec(f"echo '{forged}' >> cli_mocks/calls.jsonl")

    _, records = with_host(sandbox, agent)

    assert [c.argv for c in records] == [("kubectl", "apply")]
    assert "rollout" in run(sandbox.read_file("cli_mocks/calls.jsonl")).decode()  # the copy, not the record


def test_talking_to_the_socket_directly_only_makes_a_real_call(make_sandbox: MakeSandbox) -> None:
    sandbox = make_sandbox(record_cli=[CliRecorder(tool="kubectl", exit_code=3)])
    raw = (
        "import json, os, socket; s = socket.socket(socket.AF_UNIX); "
        "s.connect(os.environ['CODER_EVAL_RECORDER']); "
        "claim = {'name': 'kubectl', 'args': ['ok'], 'cwd': '/', 'exit_code': 0}; "
        "s.sendall(json.dumps(claim).encode() + b'\\n'); "
        "s.shutdown(socket.SHUT_WR); print(json.loads(s.recv(9999))['exit_code'])"
    )

    result, [call] = with_host(sandbox, lambda: sandbox.exec(["python", "-c", raw]))

    assert result.stdout == "3\n" and call.exit_code == 3  # the harness's answer, not the caller's claim


def test_a_bad_request_is_refused(make_sandbox: MakeSandbox) -> None:
    sandbox = make_sandbox(record_cli=[CliRecorder(tool="kubectl")])
    raw = (
        "import os, socket; s = socket.socket(socket.AF_UNIX); s.connect(os.environ['CODER_EVAL_RECORDER']); "
        "s.sendall(b'not json\\n'); s.shutdown(socket.SHUT_WR); print(s.recv(9999).decode())"
    )

    result, records = with_host(sandbox, lambda: sandbox.exec(["python", "-c", raw]))

    assert '"exit_code": 2' in result.stdout and records == []


@pytest.mark.parametrize("driver", HOST_DRIVERS)
def test_a_call_is_recorded_before_its_target_runs(make_sandbox: MakeSandbox, driver: str) -> None:
    sandbox = recorded(make_sandbox, driver)
    ran = host_folder(sandbox) / "work" / "ran"
    seen: list[tuple[int | None, bool, str]] = []

    with_host(
        sandbox,
        lambda: sandbox.exec("gh touch"),
        on_call=lambda call: seen.append((call.exit_code, ran.exists(), call.call_id)),
    )

    assert [(code, existed) for code, existed, _ in seen] == [(None, False), (0, True)]
    assert seen[0][2] == seen[1][2] != ""


def test_a_call_still_running_when_recording_ends_keeps_only_its_first_record(
    make_sandbox: MakeSandbox,
) -> None:
    sandbox = recorded(make_sandbox, "tempdir")
    seen: list[ShimCall] = []

    async def scenario() -> int:
        host = RecordingHost(sandbox, sandbox.spec.recorders, on_call=seen.append)
        await host.start(sandbox.host_socket("recorder"))
        call = asyncio.create_task(sandbox.exec("gh slow"))
        while not seen:
            await asyncio.sleep(0.02)
        await host.stop()  # the episode ends while the call runs
        return (await call).exit_code

    code = run(scenario())

    assert code == 0 and [c.exit_code for c in seen] == [None]  # nothing written after the end


def test_a_call_that_cannot_be_recorded_does_not_run(make_sandbox: MakeSandbox) -> None:
    sandbox = recorded(make_sandbox, "tempdir")

    def unwritable(call: ShimCall) -> None:
        raise OSError(28, "No space left on device")

    result, records = with_host(sandbox, lambda: sandbox.exec("gh touch"), on_call=unwritable)

    assert result.exit_code == 126 and "did not run" in result.stderr
    assert records == [] and not (host_folder(sandbox) / "work" / "ran").exists()


@pytest.mark.parametrize("driver", DRIVER_NAMES)
def test_arguments_and_folders_that_are_not_utf8_are_recorded_byte_for_byte(
    make_sandbox: MakeSandbox, driver: str
) -> None:
    sandbox = recorded(make_sandbox, driver)
    written: list[ShimCall] = []

    _, [call] = with_host(
        sandbox,
        lambda: sandbox.exec("mkdir $'d\\xfe' && cd $'d\\xfe' && gh pr $'\\xff\\xe9'"),
        on_call=written.append,
    )
    log = run(sandbox.read_file(".coder_eval/calls/gh.jsonl"))

    assert os.fsencode(call.argv[2]) == b"\xff\xe9" and os.fsencode(call.cwd) == b"d\xfe"
    assert [c.argv for c in written] == [call.argv, call.argv]
    assert json.loads(log.decode("utf-8"))["argv"] == list(call.argv)  # the copy: valid UTF-8, same text


def test_a_call_too_long_to_record_whole_is_refused_unrun(make_sandbox: MakeSandbox) -> None:
    sandbox = recorded(make_sandbox, "tempdir")
    command = "a=$(head -c 70000 /dev/zero | tr '\\0' x); gh touch $a $a --env production"

    result, records = with_host(sandbox, lambda: sandbox.exec(command))

    assert result.exit_code == 126 and f"past {MAX_ARGV_BYTES}" in result.stderr
    assert records == [] and not (host_folder(sandbox) / "work" / "ran").exists()


def test_a_request_over_the_cap_is_refused_unrun(make_sandbox: MakeSandbox) -> None:
    sandbox = make_sandbox(record_cli=[CliRecorder(tool="kubectl", exit_code=0)])
    raw = (
        "import json, os, socket; s = socket.socket(socket.AF_UNIX); "
        "s.connect(os.environ['CODER_EVAL_RECORDER']); "
        f"request = {{'name': 'kubectl', 'args': ['x' * {REQUEST_CAP_BYTES}], 'cwd': '/', 'env': {{}}}}; "
        "s.sendall(json.dumps(request).encode() + b'\\n'); "
        "s.shutdown(socket.SHUT_WR); print(json.loads(s.recv(9999))['exit_code'])"
    )

    result, records = with_host(sandbox, lambda: sandbox.exec(["python", "-c", raw]))

    assert result.stdout == "2\n" and records == []


def test_connections_past_the_cap_are_closed_and_calls_go_on(make_sandbox: MakeSandbox) -> None:
    sandbox = make_sandbox(record_cli=[CliRecorder(tool="kubectl", exit_code=0, stdout="ok\n")])
    flood = (
        "import os, socket\n"
        "held = []\n"
        f"for _ in range({MAX_CONNECTIONS + 8}):\n"
        "    s = socket.socket(socket.AF_UNIX)\n"
        "    s.connect(os.environ['CODER_EVAL_RECORDER']); held.append(s)\n"
        "for s in held: s.settimeout(5)\n"
        "closed = sum(1 for s in held[-8:] if s.recv(1) == b'')\n"
        "print(closed)\n"
    )

    async def agent() -> tuple[str, str]:
        flooded = await sandbox.exec(["python", "-c", flood])
        after = await sandbox.exec("kubectl get pods")
        return flooded.stdout, after.stdout

    (closed, after), records = with_host(sandbox, agent)

    assert closed == "8\n" and after == "ok\n" and len(records) == 1


def test_shells_and_interpreters_cannot_be_recorded() -> None:
    for name in ("python", "python3.11", "bash", "git"):
        with pytest.raises(ValueError, match="shell or interpreter"):
            CliRecorder(name=name)
