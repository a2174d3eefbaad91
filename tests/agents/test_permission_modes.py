"""The original format's ``permission_mode`` values on Codex and OpenCode: each runs as that CLI's
nearest mode (docs/agents.md), end to end with the real CLI against the scripted server."""

from __future__ import annotations

from pathlib import Path

import pytest

from coder_eval.trajectory import ToolResult
from tests.agents.test_cli_agents import AGENTS, EDIT_AND_RUN, criteria, run, task_file

pytestmark = pytest.mark.slow

CRITERIA = """
- {type: file_contains, path: calc.py, includes: ["return a + b"]}
- {type: command_executed, pattern: "calc\\\\.add", min_count: 2, require_success: true}
"""
CODEX, OPENCODE = (AGENTS[0], AGENTS[1])


@pytest.mark.parametrize("kind", [CODEX, OPENCODE])
def test_accept_edits_with_bash_allowed_edits_and_runs_commands(kind: str, tmp_path: Path) -> None:
    options = ", permission_mode: acceptEdits, allowed_tools: [Bash, Read, Edit, Write]"
    end, events = run(task_file(tmp_path, kind, EDIT_AND_RUN, CRITERIA, agent_options=options), tmp_path)
    assert (end.outcome, end.status) == ("pass", "completed"), (end.error, criteria(events))


def test_accept_edits_on_opencode_denies_commands_bash_is_not_allowed(tmp_path: Path) -> None:
    options = ", permission_mode: acceptEdits"
    end, events = run(
        task_file(tmp_path, "opencode", EDIT_AND_RUN, CRITERIA, agent_options=options), tmp_path
    )
    outputs = [e.output for e in events if isinstance(e, ToolResult)]
    assert end.status == "completed" and not criteria(events)["command_executed"].passed
    assert any("unavailable tool 'Bash'" in output for output in outputs)  # OpenCode withdrew its bash tool
    assert not any(output.strip() == "5" for output in outputs)  # no command ran


@pytest.mark.parametrize("kind", [CODEX])
def test_plan_is_codex_read_only_sandbox_refused_inside_bwrap(kind: str, tmp_path: Path) -> None:
    sandbox = "  driver: bwrap\n"
    path = task_file(
        tmp_path,
        kind,
        EDIT_AND_RUN,
        CRITERIA,
        agent_options=", permission_mode: plan",
        sandbox_options=sandbox,
    )
    end, _ = run(path, tmp_path)
    assert (end.outcome, end.status) == ("invalid", "infra_error")
    assert "permission_mode plan runs Codex's own read-only sandbox, which cannot start inside the bwrap" in (
        end.error or ""
    )
