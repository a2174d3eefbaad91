"""OpenCode's per-episode config: the permission rules each ``permission_mode`` writes."""

from __future__ import annotations

import asyncio
import json

import pytest

from coder_eval.agents.opencode.home import OpenCodeConfig
from coder_eval.agents.opencode.spec import OpenCodeSpec
from coder_eval.sandbox import FakeSandbox


def permissions(**fields: object) -> dict[str, str]:
    sandbox = FakeSandbox()
    config = OpenCodeConfig("/home/.config/opencode")
    asyncio.run(
        config.write(
            sandbox, OpenCodeSpec(**fields), model=None, endpoint=None, instructions=None, skill_paths=[]
        )
    )
    written: dict[str, str] = json.loads(sandbox.files["home/.config/opencode/opencode.json"])["permission"]
    return written


EDITS = {"edit": "deny", "write": "deny", "patch": "deny"}


@pytest.mark.parametrize(
    ("fields", "denied"),
    [
        ({}, {}),
        ({"permission_mode": "plan", "allowed_tools": ["Bash", "Edit"]}, {**EDITS, "bash": "deny"}),
        ({"permission_mode": "acceptEdits"}, {"bash": "deny"}),
        ({"permission_mode": "acceptEdits", "allowed_tools": ["Bash", "Read", "Write"]}, {}),
        ({"permission_mode": "default"}, {**EDITS, "bash": "deny"}),
        ({"permission_mode": "default", "allowed_tools": ["Edit", "Read"]}, {"bash": "deny"}),
        ({"permission_mode": "dontAsk", "allowed_tools": ["Bash"]}, EDITS),
    ],
)
def test_each_permission_mode_denies_what_claude_code_would_ask_about(
    fields: dict[str, object], denied: dict[str, str]
) -> None:
    assert permissions(**fields) == {"*": "allow", **denied}
