"""Harbor's container paths mapped into a sandbox, and the scripts that run Harbor's test and solve."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from coder_eval.agents.oracle import steps
from coder_eval.interop.task_readers.harbor_scripts import (
    ROOT,
    WORKDIR,
    map_paths,
    oracle_script,
    solution_files,
    verifier_command,
)
from coder_eval.sandbox import Provision, TempdirSandbox, TempdirSpec


@pytest.mark.parametrize(
    ("script", "mapped"),
    [
        ("pytest /tests/test_outputs.py", f"pytest {ROOT}/tests/test_outputs.py"),
        ("echo 1 > /logs/verifier/reward.txt", f"echo 1 > {ROOT}/logs/verifier/reward.txt"),
        ("python -c 'open(\"/tests/x\")'", f"python -c 'open(\"{ROOT}/tests/x\")'"),
        ("cd /app && cp /solution/a .", f"cd {WORKDIR} && cp {ROOT}/solution/a ."),
        ("ls /tests", f"ls {ROOT}/tests"),
        (
            "ls /my/tests /testsuite ./tests $HOME/tests /application",
            "ls /my/tests /testsuite ./tests $HOME/tests /application",
        ),
    ],
)
def test_container_paths_are_mapped_and_look_alikes_are_not(script: str, mapped: str) -> None:
    assert map_paths(script, "/app") == mapped


def test_without_a_workdir_absolute_paths_stay(tmp_path: Path) -> None:
    assert map_paths("cat /app/x", None) == "cat /app/x" and map_paths("cat /app/x", "/") == "cat /app/x"


def run_in_sandbox(command: str, files: dict[str, str]) -> tuple[int, str, dict[str, str]]:
    async def go() -> tuple[int, str, dict[str, str]]:
        sandbox = await TempdirSandbox.create(TempdirSpec(), Provision())
        try:
            for name, text in files.items():
                await sandbox.write_file(name, text)
            result = await sandbox.exec(command, timeout=30)
            found = {p: (await sandbox.read_file(p)).decode("latin-1") for p in await sandbox.glob("**")}
            return result.exit_code, result.output, found
        finally:
            await sandbox.close()

    return asyncio.run(go())


def test_the_verifier_command_runs_test_sh_with_fresh_logs_from_the_workspace() -> None:
    test = "#!/bin/bash\ncat /app/answer.txt > /logs/verifier/seen\n"
    test += "echo \"$LEVEL\" > '/logs/verifier/reward.txt'\n"
    command = verifier_command(test, workdir="/app", env={"LEVEL": "0.5 x"})
    planted = {"answer.txt": "42\n", ".harbor/logs/verifier/reward.txt": "1\n", ".harbor/logs/stale": "x"}
    code, output, files = run_in_sandbox(command, planted)
    assert code == 0, output
    assert files[".harbor/logs/verifier/seen"] == "42\n"
    assert files[".harbor/logs/verifier/reward.txt"] == "0.5 x\n"
    assert ".harbor/logs/stale" not in files  # what the agent left under logs/ is gone


def test_the_oracle_script_writes_the_solution_outside_the_workspace_and_runs_in_one_step(
    tmp_path: Path,
) -> None:
    solution = tmp_path / "solution"
    (solution / "data").mkdir(parents=True)
    (solution / "solve.sh").write_text(
        '#!/bin/bash\ncp /solution/data/blob.bin /app/out.bin\n\necho "$MODE"\n'
    )
    (solution / "data" / "blob.bin").write_bytes(bytes(range(256)))
    files = solution_files(solution)
    assert files is not None
    script = oracle_script(files, workdir="/app", env={"MODE": "fast"})
    assert len(steps(script)) == 1  # the oracle would run it whole
    code, output, found = run_in_sandbox(script, {})
    assert (code, output.strip()) == (0, "fast")
    assert found == {"out.bin": bytes(range(256)).decode("latin-1")}


def test_a_solution_too_big_to_inline_gives_no_oracle(tmp_path: Path) -> None:
    (tmp_path / "solve.sh").write_text("true\n")
    (tmp_path / "big.bin").write_bytes(b"\0" * 1_000_001)
    assert solution_files(tmp_path) is None
