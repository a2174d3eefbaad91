"""Recording shims: a command on PATH that runs a fake CLI and logs every call for the graders.

Example (task file)::

    sandbox:
      mock_path_dirs: [mock_bin]
      shims: [{name: gh, target: mock_bin/gh}]

The agent runs ``gh pr create --title x``; the shim runs ``<root>/mock_bin/gh`` with the same
arguments, passes stdin, stdout, stderr and the exit code through, and appends one JSON line to
``.coder_eval/calls/gh.jsonl``::

    {"argv": ["gh", "pr", "create", "--title", "x"], "cwd": ".", "exit_code": 0,
     "ts": "2025-01-01T12:00:00.000000+00:00", "duration_s": 0.03,
     "stdout": "...", "stdout_truncated": false}

A grader replays them with ``read_calls(sandbox.root, "gh")``.
"""

from __future__ import annotations

import inspect
import json
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from coder_eval.errors import SandboxError
from coder_eval.sandbox.base import inside

if TYPE_CHECKING:
    from coder_eval.task import Shim

STDOUT_CAP_BYTES = 10_000
"""How much of each call's stdout the log keeps (all of it is still passed through)."""


@dataclass(frozen=True)
class ShimCall:
    """One recorded call. ``cwd`` is relative to the sandbox root when inside it, else absolute."""

    argv: tuple[str, ...]
    cwd: str
    exit_code: int
    ts: str
    duration_s: float
    stdout: str = ""
    stdout_truncated: bool = False

    @property
    def args(self) -> tuple[str, ...]:
        """The arguments without the command name: ``("pr", "create")`` for ``gh pr create``."""
        return self.argv[1:]


def read_calls(sandbox_root: Path, shim_or_log_path: Shim | str) -> list[ShimCall]:
    """Every call a shim recorded, oldest first; ``[]`` when it was never called.

    Example: ``read_calls(root, "gh")`` reads ``.coder_eval/calls/gh.jsonl``;
    ``read_calls(root, "logs/gh.jsonl")`` or ``read_calls(root, task.sandbox.shims[0])`` read that log.
    """
    if isinstance(shim_or_log_path, str):
        relative = shim_or_log_path
        if "/" not in relative and not relative.endswith(".jsonl"):
            relative = f".coder_eval/calls/{relative}.jsonl"
    else:
        relative = shim_or_log_path.log_path
    log = inside(sandbox_root, relative)
    if not log.is_file():
        return []
    lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
    return [_parse(log, number, line) for number, line in enumerate(lines, start=1) if line.strip()]


def install_shims(shims: Iterable[Shim], *, root: Path, bin_dir: Path) -> None:
    """Write an executable ``<bin_dir>/<name>`` for each shim (``bin_dir`` goes first on PATH)."""
    python = _interpreter()
    for shim in shims:
        target = inside(root, shim.target)
        config = {
            "name": shim.name,
            "target": str(target),
            "log": str(inside(root, shim.log_path)),
            "root": str(root.resolve()),
            "cap": STDOUT_CAP_BYTES,
        }
        script = bin_dir / shim.name
        script.write_text(_shim_source(python, config), encoding="utf-8")
        script.chmod(0o755)
        if target.is_file():
            target.chmod(target.stat().st_mode | 0o111)


def _interpreter() -> str:
    python = str(Path(sys.executable).absolute())
    if re.search(r"\s", python) or len(python) > 200:
        raise SandboxError(
            f"cannot install shims: the interpreter path {python!r} has whitespace or is too long "
            "for a '#!' line; run coder_eval from a virtualenv at a shorter path without spaces"
        )
    return python


def _shim_source(python: str, config: dict[str, Any]) -> str:
    body = inspect.getsource(_shim_main)
    return f"#!{python} -IS\n{body}\n\nraise SystemExit(_shim_main({json.dumps(config)!r}))\n"


def _parse(log: Path, number: int, line: str) -> ShimCall:
    try:
        data = json.loads(line)
        return ShimCall(
            argv=tuple(data["argv"]),
            cwd=data["cwd"],
            exit_code=int(data["exit_code"]),
            ts=data["ts"],
            duration_s=float(data["duration_s"]),
            stdout=data.get("stdout", ""),
            stdout_truncated=bool(data.get("stdout_truncated", False)),
        )
    except (ValueError, KeyError, TypeError) as exc:
        raise SandboxError(f"{log}:{number}: not a shim call record ({exc}): {line[:200]!r}") from exc


def _shim_main(config_json: str) -> int:
    """The shim itself: its source is copied into each shim script, so it imports only the stdlib."""
    import json
    import os
    import subprocess
    import sys
    import time
    from datetime import UTC, datetime
    from pathlib import Path

    config = json.loads(config_json)
    started, clock = datetime.now(UTC).isoformat(), time.monotonic()
    captured, total, passing = bytearray(), 0, True
    try:
        proc = subprocess.Popen([config["target"], *sys.argv[1:]], stdout=subprocess.PIPE)
    except OSError as exc:
        sys.stderr.write(f"{config['name']}: cannot run {config['target']}: {exc.strerror}\n")
        code = 127
    else:
        assert proc.stdout is not None
        while chunk := os.read(proc.stdout.fileno(), 65536):
            total += len(chunk)
            captured += chunk[: max(0, config["cap"] - len(captured))]
            if passing:
                try:
                    sys.stdout.buffer.write(chunk)
                    sys.stdout.buffer.flush()
                except BrokenPipeError:  # e.g. `gh ... | head -1`: keep recording, stop passing
                    passing = False
                    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        code = proc.wait()
        code = 128 - code if code < 0 else code
    cwd, root = Path.cwd(), Path(config["root"])
    record = {
        "argv": [config["name"], *sys.argv[1:]],
        "cwd": str(cwd.relative_to(root)) if cwd.is_relative_to(root) else str(cwd),
        "exit_code": code,
        "ts": started,
        "duration_s": round(time.monotonic() - clock, 6),
        "stdout": captured.decode("utf-8", errors="replace"),
        "stdout_truncated": total > len(captured),
    }
    log = Path(config["log"])
    log.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8"))
    finally:
        os.close(fd)
    return code
