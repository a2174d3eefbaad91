"""OpenCode's own word on the skills it loads: ``opencode debug skill`` in the episode's sandbox.

Example::

    message = await skill_listing(sandbox, binary, launch.env, pure=True)
    message.content[0]    # {"type": "skills", "skills": [{"name": "pdf", "location": "/…/pdf/SKILL.md"}]}

Run with the episode's configuration and environment just before ``opencode run``, so it reads the
same ``skills.paths`` and project folders the run will (``coder_eval.episode.skill_record`` turns it into
``episode_end.skills.loaded``). It costs one more start of the CLI, so it runs only in episodes that
offer plugins. A listing that cannot be read is recorded with its error, and nothing counts as loaded.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from coder_eval.sandbox.base import Sandbox
from coder_eval.trajectory import Message

LISTING_TIMEOUT_S = 120.0


async def skill_listing(sandbox: Sandbox, binary: Path, env: Mapping[str, str], *, pure: bool) -> Message:
    """The listing as a ``system`` message of type ``skills`` (see the module docstring)."""
    argv = [str(binary), "debug", "skill", *(["--pure"] if pure else [])]
    result = await sandbox.exec(argv, env=env, timeout=LISTING_TIMEOUT_S)
    skills = _parse(result.stdout) if result.exit_code == 0 else None
    block: dict[str, Any] = {"type": "skills", "source": "opencode debug skill"}
    if skills is None:
        block["error"] = f"exit {result.exit_code}: {result.output.strip()[-300:]}"
    else:
        block["skills"] = skills
    return Message(role="system", content=[block])


def _parse(stdout: str) -> list[dict[str, str]] | None:
    start = stdout.find("[")
    try:
        items = json.loads(stdout[start:]) if start >= 0 else None
    except json.JSONDecodeError:
        return None
    if not isinstance(items, list):
        return None
    return [
        {"name": str(item.get("name", "")), "location": str(item.get("location", ""))}
        for item in items
        if isinstance(item, dict)
    ]
