"""Gemini CLI's per-episode settings: ``$HOME/.gemini/settings.json``, ``GEMINI.md`` and skills.

Example::

    home = GeminiHome(f"{sandbox.env['HOME']}/.gemini")
    await home.write(sandbox, spec, max_turns=10, instructions="Be terse.", skills=[...])
    home.env(endpoint)     # {"GEMINI_API_KEY": "...", "GOOGLE_GEMINI_BASE_URL": "http://127.0.0.1:PORT", ...}

The settings select API-key auth (a custom base URL fails without it), turn off usage statistics,
telemetry, update checks and retries (``general.maxAttempts: 1``: a provider error ends the run and
is mapped to ``invalid``), cap the session's turns, and exclude disallowed tools by their Gemini
names. Instructions go to the global ``GEMINI.md`` context file; each offered skill is linked into
``skills/`` (the link leads to its read-only staged folder), where Gemini CLI lists it to
``activate_skill``. Every file is written through the sandbox's verbs, so HOME may be in a container.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from coder_eval.agents.base import ModelEndpoint
from coder_eval.agents.cli_spec import link_skills
from coder_eval.agents.gemini.spec import GeminiSpec

if TYPE_CHECKING:
    from coder_eval.sandbox.base import Sandbox

QUIET: dict[str, str] = {
    "NO_COLOR": "1",
    "GEMINI_CLI_NO_RELAUNCH": "true",
    "GEMINI_TELEMETRY_ENABLED": "false",
}
"""No colour codes, no self-relaunch with a bigger heap (a second Node start-up), no telemetry."""


class GeminiHome:
    """Writes one episode's ``~/.gemini`` (see the module docstring), a path inside the sandbox."""

    def __init__(self, folder: str) -> None:
        self.folder = folder

    async def write(
        self,
        sandbox: Sandbox,
        spec: GeminiSpec,
        *,
        max_turns: int | None,
        instructions: str | None,
        skills: Sequence[str],
    ) -> None:
        """Write ``settings.json``, ``GEMINI.md`` (when there are instructions) and the skills."""
        settings: dict[str, Any] = {
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "privacy": {"usageStatisticsEnabled": False},
            "telemetry": {"enabled": False},
            "general": {"disableAutoUpdate": True, "disableUpdateNag": True, "maxAttempts": 1},
            "tools": {"exclude": _excluded(spec)},
        }
        if max_turns is not None:
            settings["model"] = {"maxSessionTurns": max_turns}
        await sandbox.write_file(f"{self.folder}/settings.json", json.dumps(settings, indent=2))
        if instructions:
            await sandbox.write_file(f"{self.folder}/GEMINI.md", instructions)
        await link_skills(sandbox, list(skills), f"{self.folder}/skills")

    def env(self, endpoint: ModelEndpoint | None) -> dict[str, str]:
        """The quiet switches, and with an endpoint (the scripted server) its URL and key."""
        if endpoint is None:
            return dict(QUIET)
        return {**QUIET, "GEMINI_API_KEY": endpoint.api_key, "GOOGLE_GEMINI_BASE_URL": endpoint.base_url}


def _excluded(spec: GeminiSpec) -> list[str]:
    forms = GeminiSpec.TOOLS.by_canonical()
    off = {forms[name].name for name in spec.disallowed_tools if name in forms}
    if spec.allowed_tools:
        off |= {form.name for canonical, form in forms.items() if canonical not in spec.allowed_tools}
    return sorted(off)
