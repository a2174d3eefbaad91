from __future__ import annotations

import os
from pathlib import Path

import pytest

from coder_eval.sandbox import process
from coder_eval.sandbox.process import run_in_group

from .builders import run


def test_long_output_is_cut_with_a_note(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(process, "MAX_OUTPUT_BYTES", 10)

    result = run(run_in_group(["head", "-c", "30", "/dev/zero"], cwd=tmp_path, env={"PATH": "/usr/bin:/bin"}))

    assert result.stdout == "\0" * 10 + "\n[coder_eval: output cut at 10 of 30 bytes]"


def test_missing_program_is_127(tmp_path: Path) -> None:
    result = run(run_in_group(["/no/such/program"], cwd=tmp_path, env={}))

    assert result.exit_code == 127 and "/no/such/program" in result.stderr


@pytest.mark.parametrize("pidfds", [True, False], ids=["pidfd", "no-pidfd"])
def test_exit_codes_and_timeouts_with_and_without_pidfds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pidfds: bool
) -> None:
    if not pidfds:  # a kernel without pidfds: a worker thread waits instead

        def refused(pid: int, flags: int = 0) -> int:
            raise OSError(38, "Function not implemented")

        monkeypatch.setattr(process.os, "pidfd_open", refused)
    env = {"PATH": "/usr/bin:/bin"}

    done = run(run_in_group(["/bin/sh", "-c", "echo out; echo err >&2; exit 3"], cwd=tmp_path, env=env))
    slow = run(run_in_group(["sleep", "30"], cwd=tmp_path, env=env, timeout=0.3))

    assert (done.exit_code, done.stdout, done.stderr, done.timed_out) == (3, "out\n", "err\n", False)
    assert (slow.exit_code, slow.timed_out) == (124, True) and slow.duration_s < 5


def test_a_flood_is_read_as_it_comes_and_only_the_cap_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(process, "MAX_OUTPUT_BYTES", 1000)
    env = {"PATH": "/usr/bin:/bin"}
    script = "head -c 50000000 /dev/zero; echo done >&2"

    result = run(run_in_group(["/bin/sh", "-c", script], cwd=tmp_path, env=env, max_output=1000))

    assert result.stdout == "\0" * 1000 + "\n[coder_eval: output cut at 1000 of 50000000 bytes]"
    assert (result.exit_code, result.stderr) == (0, "done\n")


def test_stdin_carries_undecodable_bytes_back_as_they_were(tmp_path: Path) -> None:
    text = os.fsdecode(b"caf\xe9 \xff")

    result = run(run_in_group(["od", "-An", "-tx1"], cwd=tmp_path, env={"PATH": "/usr/bin:/bin"}, stdin=text))

    assert result.stdout.split() == ["63", "61", "66", "e9", "20", "ff"]
