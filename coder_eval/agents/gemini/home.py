"""Gemini CLI's per-episode settings: ``$HOME/.gemini/settings.json``, ``GEMINI.md`` and skills.

Example::

    home = GeminiHome(Path(sandbox.env["HOME"]) / ".gemini")
    home.write(spec, max_turns=10, instructions="Be terse.", skills=[...])
    home.env(endpoint)     # {"GEMINI_API_KEY": "...", "GOOGLE_GEMINI_BASE_URL": "http://127.0.0.1:PORT", ...}

The settings select API-key auth (a custom base URL fails without it), turn off usage statistics,
telemetry, update checks and retries (``general.maxAttempts: 1``: a provider error ends the run and
is mapped to ``invalid``), cap the session's turns, and exclude disallowed tools by their Gemini
names. Instructions go to the global ``GEMINI.md`` context file; each plugin's skills are copied to
``skills/``, where Gemini CLI lists them to ``activate_skill``.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from coder_eval.agents.base import ModelEndpoint
from coder_eval.agents.gemini.spec import GeminiSpec
from coder_eval.tools import VOCABULARIES

QUIET: dict[str, str] = {
    "NO_COLOR": "1",
    "GEMINI_CLI_NO_RELAUNCH": "true",
    "GEMINI_TELEMETRY_ENABLED": "false",
}
"""No colour codes, no self-relaunch with a bigger heap (a second Node start-up), no telemetry."""


class GeminiHome:
    """Writes one episode's ``~/.gemini`` (see the module docstring)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def write(
        self, spec: GeminiSpec, *, max_turns: int | None, instructions: str | None, skills: Sequence[Path]
    ) -> None:
        """Write ``settings.json``, ``GEMINI.md`` (when there are instructions) and the skills."""
        self.folder.mkdir(parents=True, exist_ok=True)
        settings: dict[str, Any] = {
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "privacy": {"usageStatisticsEnabled": False},
            "telemetry": {"enabled": False},
            "general": {"disableAutoUpdate": True, "disableUpdateNag": True, "maxAttempts": 1},
            "tools": {"exclude": _excluded(spec)},
        }
        if max_turns is not None:
            settings["model"] = {"maxSessionTurns": max_turns}
        (self.folder / "settings.json").write_text(json.dumps(settings, indent=2), encoding="utf-8")
        if instructions:
            (self.folder / "GEMINI.md").write_text(instructions, encoding="utf-8")
        for skill in skills:
            target = self.folder / "skills" / skill.name
            shutil.rmtree(target, ignore_errors=True)
            shutil.copytree(skill, target, symlinks=False)

    def env(self, endpoint: ModelEndpoint | None) -> dict[str, str]:
        """The quiet switches, and with an endpoint (the scripted server) its URL and key."""
        if endpoint is None:
            return dict(QUIET)
        return {**QUIET, "GEMINI_API_KEY": endpoint.api_key, "GOOGLE_GEMINI_BASE_URL": endpoint.base_url}


def _excluded(spec: GeminiSpec) -> list[str]:
    forms = VOCABULARIES["gemini"]
    off = {forms[name].name for name in spec.disallowed_tools if name in forms}
    if spec.allowed_tools:
        off |= {form.name for canonical, form in forms.items() if canonical not in spec.allowed_tools}
    return sorted(off)
