"""Recorded CLIs: the harness makes and records every call; nothing the agent writes changes a record."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import pytest

from coder_eval.sandbox import HostSandbox, RecordingHost
from coder_eval.sandbox.recording import STDOUT_CAP_BYTES, ShimCall
from coder_eval.sandbox.spec import CliRecorder, StarterFile, StarterFiles

from .builders import DRIVER_NAMES, run
from .conftest import MakeSandbox

T = TypeVar("T")
FAKE_GH = """#!/bin/sh
if [ "$1" = fail ]; then echo nope >&2; exit 4; fi
if [ "$1" = big ]; then head -c 20000 /dev/zero | tr '\\0' x; exit 0; fi
if [ "$1" = stdin ]; then cat; exit 0; fi
if [ "$1" = env ]; then echo "token=$GH_TOKEN"; exit 0; fi
echo "{\\"method\\": \\"POST\\", \\"args\\": \\"$*\\"}"
"""


def recorded(make_sandbox: MakeSandbox, driver: str, *recorders: CliRecorder) -> HostSandbox:
    fake = StarterFile(path="mock_bin/gh", content=FAKE_GH, executable=True)
    return make_sandbox(
        driver,
        template_sources=[StarterFiles(files=[fake])],
        shims=list(recorders) or [CliRecorder(name="gh", target="mock_bin/gh")],
    )


def with_host(sandbox: HostSandbox, step: Callable[[], Awaitable[T]]) -> tuple[T, list[ShimCall]]:
    """Run ``step`` while the sandbox's recorder is listening; returns its result and the records."""

    async def scenario() -> tuple[T, list[ShimCall]]:
        host = RecordingHost(sandbox, sandbox.spec.recorders)
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


def test_shells_and_interpreters_cannot_be_recorded() -> None:
    for name in ("python", "python3.11", "bash", "git"):
        with pytest.raises(ValueError, match="shell or interpreter"):
            CliRecorder(name=name)
