"""The Codex CLI's per-episode home: ``$CODEX_HOME`` with its ``config.toml``, skills and model entry.

Example::

    setup = CodexHome(f"{sandbox.env['HOME']}/.codex")
    await setup.write(sandbox, spec, codex=codex, model="gpt-5.1-codex", endpoint=endpoint,
                      instructions=None, skills=[...])
    setup.env()          # {"CODEX_HOME": ".../.codex", "CODER_EVAL_MODEL_KEY": "..."}

``config.toml`` pins everything the host's config could change and turns off what would reach the
network: update checks, analytics, web search, plugins, apps, model discovery, tool suggestions,
sub-agents, goals. Commands run in a plain (not a login) shell, so the sandbox's PATH (recording
shims first) is the one they see. Retries are off (the outcome is mapped honestly instead) and a dead endpoint
fails at once (``unbounded_connection_retries`` off). With an endpoint (the scripted server) the
model provider is that URL, speaking the Responses API. A model slug Codex does not know gets an
entry in ``model_catalog.json`` copied from a known model (otherwise Codex falls back to metadata
without its ``apply_patch`` tool). Each offered skill is linked into ``$CODEX_HOME/skills/`` (the
link leads to its read-only staged folder), where Codex lists it to the model. Every file is written
through the sandbox's verbs, so the home may be in a container.
"""

from __future__ import annotations

import asyncio
import functools
import json
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from coder_eval.agents.base import ModelEndpoint
from coder_eval.agents.cli_spec import link_skills
from coder_eval.agents.codex.spec import CodexSpec
from coder_eval.errors import AgentError

if TYPE_CHECKING:
    from coder_eval.sandbox.base import Sandbox

PROVIDER = "coder_eval"
KEY_VARIABLE = "CODER_EVAL_MODEL_KEY"
"""The variable the scripted provider reads its key from (any value works offline)."""

TEMPLATE_MODEL = "gpt-5.5"
"""The bundled catalog entry copied for a model slug Codex does not know."""

OFF_FEATURES = (
    "plugins",
    "apps",
    "remote_plugin",
    "api_key_model_discovery",
    "tool_suggest",
    "multi_agent",
    "goals",
    "unbounded_connection_retries",
    "memories",
    "shell_snapshot",
)
"""Codex features that reach the network or change the run's shape; all off."""


def _toml(value: Any) -> str:
    """A TOML value (JSON strings, numbers and booleans are valid TOML)."""
    return json.dumps(value)


@functools.lru_cache(maxsize=4)
def bundled_catalog(codex: Path) -> dict[str, dict[str, Any]]:
    """The model catalog shipped in the Codex binary, by slug (read once per process)."""
    with tempfile.TemporaryDirectory(prefix="coder_eval-codex-") as scratch:
        done = subprocess.run(
            [str(codex), "debug", "models", "--bundled"],
            capture_output=True,
            text=True,
            timeout=30,
            env={"PATH": "/usr/bin:/bin", "CODEX_HOME": scratch, "HOME": scratch},
            check=False,
        )
    try:
        models = json.loads(done.stdout)["models"]
    except (ValueError, KeyError, TypeError) as exc:
        raise AgentError(f"cannot read Codex's bundled model catalog ({codex} debug models): {exc}") from exc
    return {entry["slug"]: entry for entry in models}


class CodexHome:
    """Writes one episode's ``$CODEX_HOME`` (see the module docstring), a path inside the sandbox."""

    def __init__(self, path: str) -> None:
        self.path = path

    async def write(
        self,
        sandbox: Sandbox,
        spec: CodexSpec,
        *,
        codex: Path,
        model: str | None,
        endpoint: ModelEndpoint | None,
        instructions: str | None,
        skills: Sequence[str],
    ) -> None:
        """Write ``config.toml``, the model catalog (when needed) and the skills."""
        catalog = await self._catalog(sandbox, codex, model, spec) if model is not None else None
        lines = _settings(spec, model, instructions, catalog, endpoint is not None)
        if endpoint is not None:
            lines += ["", f"[model_providers.{PROVIDER}]", f"name = {_toml(PROVIDER)}"]
            lines += [f"base_url = {_toml(endpoint.base_url.rstrip('/') + '/v1')}"]
            lines += [f"env_key = {_toml(KEY_VARIABLE)}", 'wire_api = "responses"']
            lines += ["request_max_retries = 0", "stream_max_retries = 0"]
        await sandbox.write_file(f"{self.path}/config.toml", "\n".join(lines) + "\n")
        await link_skills(sandbox, list(skills), f"{self.path}/skills")

    def env(self, endpoint: ModelEndpoint | None) -> dict[str, str]:
        """What Codex's environment adds: its home, and the scripted provider's key."""
        env = {"CODEX_HOME": self.path}
        if endpoint is not None:
            env[KEY_VARIABLE] = endpoint.api_key
        return env

    async def _catalog(self, sandbox: Sandbox, codex: Path, model: str, spec: CodexSpec) -> str | None:
        catalog = await asyncio.to_thread(bundled_catalog, codex)
        edits = not _allowed(spec, "Edit") or not _allowed(spec, "Write")
        if model in catalog and not edits:
            return None
        entry = dict(catalog.get(model) or catalog[TEMPLATE_MODEL], slug=model, display_name=model)
        if edits:
            entry["apply_patch_tool_type"] = None
        path = f"{self.path}/model_catalog.json"
        await sandbox.write_file(path, json.dumps({"models": [entry]}))
        return path


def _settings(
    spec: CodexSpec, model: str | None, instructions: str | None, catalog: str | None, provider: bool
) -> list[str]:
    """The top-level keys, ``[analytics]``, ``[history]`` and ``[features]`` of ``config.toml``."""
    lines = ["check_for_update_on_startup = false", 'web_search = "disabled"', "allow_login_shell = false"]
    if model is not None:
        lines.append(f"model = {_toml(model)}")
    if spec.reasoning_effort is not None:
        lines.append(f"model_reasoning_effort = {_toml(spec.reasoning_effort)}")
    if instructions:
        lines.append(f"developer_instructions = {_toml(instructions)}")
    if catalog is not None:
        lines.append(f"model_catalog_json = {_toml(catalog)}")
    if provider:
        lines.append(f"model_provider = {_toml(PROVIDER)}")
    lines += ["", "[analytics]", "enabled = false", "", "[history]", 'persistence = "none"', ""]
    lines += ["[features]", *(f"{name} = false" for name in OFF_FEATURES)]
    if not _allowed(spec, "Bash"):
        lines.append("shell_tool = false")
    return lines


def _allowed(spec: CodexSpec, tool: str) -> bool:
    if tool in spec.disallowed_tools:
        return False
    return not spec.allowed_tools or tool in spec.allowed_tools
