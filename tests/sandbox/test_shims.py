from __future__ import annotations

import json

import pytest

from coder_eval.errors import SandboxError
from coder_eval.sandbox.shims import STDOUT_CAP_BYTES, read_calls
from coder_eval.task import SandboxSpec, Shim, StarterFile, TemplateSource

from .builders import run
from .conftest import MakeSandbox

FAKE_GH = """#!/bin/sh
if [ "$1" = fail ]; then echo nope >&2; exit 4; fi
if [ "$1" = big ]; then head -c 20000 /dev/zero | tr '\\0' x; exit 0; fi
if [ "$1" = stdin ]; then cat; exit 0; fi
echo "{\\"method\\": \\"POST\\", \\"args\\": \\"$*\\"}"
"""


def shim_spec(*shims: Shim) -> SandboxSpec:
    fake = StarterFile(path="mock_bin/gh", content=FAKE_GH)
    return SandboxSpec(
        template_sources=[TemplateSource(starter_files=[fake])],
        mock_path_dirs=["mock_bin"],
        shims=list(shims) or [Shim(name="gh", target="mock_bin/gh")],
    )


def test_call_is_passed_through_and_recorded(make_sandbox: MakeSandbox) -> None:
    sandbox = make_sandbox(shim_spec())
    (sandbox.root / "repo").mkdir()

    result = run(sandbox.exec("gh pr create --title 'a b'", cwd="repo"))

    [call] = read_calls(sandbox.root, "gh")
    assert json.loads(result.stdout) == {"method": "POST", "args": "pr create --title a b"}
    assert call.argv == ("gh", "pr", "create", "--title", "a b")
    assert (call.cwd, call.exit_code, call.stdout, call.stdout_truncated) == ("repo", 0, result.stdout, False)
    assert call.duration_s >= 0 and call.ts.endswith("+00:00")


def test_exit_code_and_stderr_pass_through(make_sandbox: MakeSandbox) -> None:
    sandbox = make_sandbox(shim_spec())

    result = run(sandbox.exec("gh fail"))

    assert (result.exit_code, result.stderr) == (4, "nope\n")
    assert read_calls(sandbox.root, "gh")[0].exit_code == 4


def test_stdin_passes_through(make_sandbox: MakeSandbox) -> None:
    sandbox = make_sandbox(shim_spec())

    assert run(sandbox.exec("gh stdin", stdin="body\n")).stdout == "body\n"


def test_recorded_stdout_is_capped_but_fully_passed_through(make_sandbox: MakeSandbox) -> None:
    sandbox = make_sandbox(shim_spec())

    result = run(sandbox.exec("gh big"))

    [call] = read_calls(sandbox.root, "gh")
    assert len(result.stdout) == 20000
    assert (len(call.stdout), call.stdout_truncated) == (STDOUT_CAP_BYTES, True)


def test_concurrent_calls_are_all_recorded(make_sandbox: MakeSandbox) -> None:
    sandbox = make_sandbox(shim_spec())

    run(sandbox.exec("for i in $(seq 20); do gh call $i > /dev/null & done; wait"))

    calls = read_calls(sandbox.root, "gh")
    assert sorted(int(c.args[1]) for c in calls) == list(range(1, 21))


def test_custom_log_and_cwd_outside_root(make_sandbox: MakeSandbox) -> None:
    shim = Shim(name="gh", target="mock_bin/gh", log="logs/gh.jsonl")
    sandbox = make_sandbox(shim_spec(shim))

    run(sandbox.exec("cd / && gh x"))

    assert read_calls(sandbox.root, shim)[0].cwd == "/"
    assert read_calls(sandbox.root, "logs/gh.jsonl") == read_calls(sandbox.root, shim)
    assert read_calls(sandbox.root, "gh") == []


def test_missing_target_exits_127_and_is_recorded(make_sandbox: MakeSandbox) -> None:
    sandbox = make_sandbox(shim_spec(Shim(name="aws", target="mock_bin/aws")))

    result = run(sandbox.exec("aws s3 ls"))

    assert result.exit_code == 127 and "cannot run" in result.stderr
    assert read_calls(sandbox.root, "aws")[0].argv == ("aws", "s3", "ls")


def test_a_malformed_log_line_names_the_file_and_line(make_sandbox: MakeSandbox) -> None:
    sandbox = make_sandbox(shim_spec())
    log = sandbox.root / ".coder_eval/calls/gh.jsonl"
    log.parent.mkdir(parents=True)
    log.write_text("{not json\n")

    with pytest.raises(SandboxError, match=r"gh.jsonl:1"):
        read_calls(sandbox.root, "gh")
