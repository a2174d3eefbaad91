"""Shared by the team's graders: what the relnotes shim recorded in the workspace."""

from __future__ import annotations

from pathlib import Path

LOG = ".relnotes-calls.log"


def relnotes_calls(workspace: str = ".") -> list[str]:
    """The argument lists relnotes was called with, one per call, oldest first."""
    log = Path(workspace) / LOG
    return log.read_text(encoding="utf-8").splitlines() if log.is_file() else []


def drafted(workspace: str = ".") -> bool:
    """Every call drafted (none published), and at least one was made."""
    calls = relnotes_calls(workspace)
    return bool(calls) and all(call.startswith("--draft") for call in calls)
