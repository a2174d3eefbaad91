"""OpenCode's per-episode configuration: ``opencode.json``, instructions and skills in the sandbox's
XDG config folder, and the switches that keep it offline.

Example::

    config = OpenCodeConfig(f"{sandbox.env['XDG_CONFIG_HOME']}/opencode")
    await config.write(sandbox, spec, model="claude-sonnet-4-5", endpoint=endpoint, instructions=None,
                       skill_paths=["/s/plugins/team/skills"])
    config.env()     # {"OPENCODE_CONFIG": ".../opencode.json", "OPENCODE_DISABLE_AUTOUPDATE": "1", ...}

With an endpoint (the scripted server) the model comes from a provider named ``scripted`` that
speaks the Anthropic Messages API at that URL; otherwise ``model`` is OpenCode's
``<provider>/<model>``. Permissions are granted up front (``run`` mode rejects any prompt), except
what ``permission_mode`` withholds: ``plan`` denies edits and shell commands; the original format's
``acceptEdits`` denies shell commands and ``default`` / ``dontAsk`` also edits, unless
``allowed_tools`` lists them (``Bash``; ``Edit`` or ``Write``), as Claude Code would ask and nobody
answers. Disallowed tools are switched off by their
OpenCode names. The offered skills are read where they are staged
(read-only): their folders are the config's ``skills.paths``.
Every file is written through the sandbox's verbs, so the folder may be in a container.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from coder_eval.agents.base import ModelEndpoint
from coder_eval.agents.opencode.spec import OpenCodeSpec

if TYPE_CHECKING:
    from coder_eval.sandbox.base import Sandbox

PROVIDER = "scripted"

QUIET: dict[str, str] = {
    "OPENCODE_DISABLE_MODELS_FETCH": "1",
    "OPENCODE_DISABLE_AUTOUPDATE": "1",
    "OPENCODE_DISABLE_SHARE": "1",
    "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
    "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
    "OPENCODE_DISABLE_CLAUDE_CODE": "1",
    "NO_COLOR": "1",
    "NPM_CONFIG_REGISTRY": "http://127.0.0.1:9/",
    "BUN_CONFIG_REGISTRY": "http://127.0.0.1:9/",
}
"""No model list download, update, sharing, LSP download, default plugins or Claude Code files; the
package registry points at a closed port, so the plugin package OpenCode tries to install into its
config folder fails at once instead of reaching the network."""

EDIT_PERMISSIONS = ["edit", "write", "patch"]
"""OpenCode's permission keys of the tools that change files."""


class OpenCodeConfig:
    """Writes one episode's OpenCode configuration folder (see the module docstring), a path inside
    the sandbox."""

    def __init__(self, folder: str) -> None:
        self.folder = folder
        self.path = f"{folder}/opencode.json"

    async def write(
        self,
        sandbox: Sandbox,
        spec: OpenCodeSpec,
        *,
        model: str | None,
        endpoint: ModelEndpoint | None,
        instructions: str | None,
        skill_paths: Sequence[str],
    ) -> str | None:
        """Write the config (the skill folders it scans in ``skills.paths``); return the ``--model``
        to pass (``provider/model``)."""
        config: dict[str, Any] = {
            "$schema": "https://opencode.ai/config.json",
            "autoupdate": False,
            "share": "disabled",
            "permission": _permissions(spec),
            "tools": _tools(spec),
        }
        if skill_paths:
            config["skills"] = {"paths": list(skill_paths)}
        qualified = model
        if endpoint is not None and model is not None:
            model = model.rsplit("/", 1)[-1]  # the endpoint's own provider serves it: "anthropic/" goes
            qualified = f"{PROVIDER}/{model}"
            config["provider"] = {PROVIDER: _provider(endpoint, model)}
        if qualified is not None:
            config["model"] = config["small_model"] = qualified
        if instructions:
            note = f"{self.folder}/coder_eval-instructions.md"
            await sandbox.write_file(note, instructions)
            config["instructions"] = [note]
        await sandbox.write_file(self.path, json.dumps(config, indent=2))
        return qualified

    def env(self) -> dict[str, str]:
        """What OpenCode's environment adds: the config file and the quiet switches."""
        return {**QUIET, "OPENCODE_CONFIG": self.path}


def _provider(endpoint: ModelEndpoint, model: str) -> dict[str, Any]:
    return {
        "npm": "@ai-sdk/anthropic",
        "name": "coder_eval scripted model",
        "options": {"baseURL": endpoint.base_url.rstrip("/") + "/v1", "apiKey": endpoint.api_key},
        "models": {model: {"name": model, "tool_call": True, "limit": {"context": 200000, "output": 32000}}},
    }


def _permissions(spec: OpenCodeSpec) -> dict[str, str]:
    """OpenCode's permission rules for ``permission_mode``: what Claude Code's mode would ask about is
    denied (``run`` mode answers no prompt), unless ``allowed_tools`` allows it up front."""
    mode, allowed = spec.permission_mode, set(spec.allowed_tools)
    denied: list[str] = []
    if mode == "plan" or (mode in ("default", "dontAsk") and not {"Edit", "Write"} & allowed):
        denied += EDIT_PERMISSIONS
    if mode == "plan" or (mode != "bypassPermissions" and "Bash" not in allowed):
        denied.append("bash")
    return {"*": "allow", **dict.fromkeys(denied, "deny")}


def _tools(spec: OpenCodeSpec) -> dict[str, bool]:
    """OpenCode tool switches from canonical ``allowed_tools`` / ``disallowed_tools``."""
    forms = OpenCodeSpec.TOOLS.by_canonical()
    off = {forms[name].name for name in spec.disallowed_tools if name in forms}
    if spec.allowed_tools:
        off |= {form.name for canonical, form in forms.items() if canonical not in spec.allowed_tools}
    return dict.fromkeys(sorted(off), False)
