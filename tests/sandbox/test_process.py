from __future__ import annotations

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
