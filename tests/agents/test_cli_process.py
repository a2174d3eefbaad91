"""An agent CLI's output read line by line: bytes that are not UTF-8 and over-long lines never stop it."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest

from coder_eval.agents import cli_process
from coder_eval.agents.cli_process import CliProcess
from coder_eval.sandbox import TempdirSandbox, TempdirSpec
from coder_eval.sandbox.provision import Provision

PRINTER = r"""
printf '{"text": "raw \xff\xfe bytes"}\n'
printf '{"text": "a lone \\ud800 surrogate"}\n'
printf 'not json \xff\n'
head -c 3000 /dev/zero | tr '\0' x; printf '\n'
printf '{"text": "after the long line"}\n'
printf 'complaint \xfe\n' >&2
"""


def read_all(tmp_path: Path) -> tuple[list[dict[str, Any]], list[str], list[str], int]:
    async def scenario() -> tuple[list[dict[str, Any]], list[str], list[str], int]:
        sandbox = await TempdirSandbox.create(TempdirSpec(), Provision(), base_dir=tmp_path)
        try:
            env = {"PATH": "/usr/bin:/bin", "HOME": sandbox.env["HOME"]}
            async with CliProcess(["bash", "-c", PRINTER], sandbox=sandbox, env=env) as cli:
                events = [event async for event in cli.events()]
                code = await cli.wait()
            return events, list(cli.stdout_tail), list(cli.stderr_tail), code
        finally:
            await sandbox.close()

    return asyncio.run(scenario())


def test_bytes_that_are_not_utf8_and_long_lines_never_stop_the_stream(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cli_process, "LINE_LIMIT", 1024)

    events, stdout_tail, stderr_tail, code = read_all(tmp_path)

    assert code == 0
    assert [e["text"] for e in events] == [
        "raw " + os.fsdecode(b"\xff\xfe") + " bytes",
        "a lone \ud800 surrogate",
        "after the long line",
    ]
    assert os.fsencode(events[0]["text"]) == b"raw \xff\xfe bytes"  # the CLI's own bytes
    assert "not json \\xff" in stdout_tail
    assert any("a line of more than 1024 bytes was left out" in line for line in stdout_tail)
    assert stderr_tail == ["complaint \\xfe"]
