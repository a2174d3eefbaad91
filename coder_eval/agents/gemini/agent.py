"""``gemini``: the real Gemini CLI, run as ``gemini -p PROMPT -o stream-json`` in the sandbox.

Example::

    result = await GeminiAgent().run(request, sink)
    result.status, result.usage, result.cost_usd, result.versions["gemini_cli"]

The CLI is the npm package in the project's ``node_modules``, run by the host's ``node``. Its
settings live in the sandbox's ``$HOME/.gemini`` (``home.py``); its events become trajectory events
as they stream (``recorder.py``).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from coder_eval.agents.base import AgentRequest, EventSink
from coder_eval.agents.cli_agent import CliAgent, CliLaunch, cli_env, host_credentials
from coder_eval.agents.cli_spec import max_turns, model_name, offered_skill_folders
from coder_eval.agents.gemini.home import GeminiHome
from coder_eval.agents.gemini.recorder import GeminiRecorder
from coder_eval.agents.gemini.spec import GeminiSpec
from coder_eval.agents.node_cli import node_modules
from coder_eval.agents.spec import resolve_env

SCRIPTED_MODEL = "gemini-2.5-pro"
"""The model a scripted run names when its script names none."""

HOST_CREDENTIALS = ("GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GEMINI_BASE_URL")
"""Forwarded from the host for real-model runs only."""

PERMISSION_FLAGS = {"bypassPermissions": ["--yolo"], "plan": ["--approval-mode", "plan"]}


def gemini_script() -> Path | None:
    """``@google/gemini-cli``'s entry script in ``node_modules``, else ``gemini`` on the host PATH."""
    modules = node_modules()
    if modules is not None:
        script = modules / "@google" / "gemini-cli" / "bundle" / "gemini.js"
        if script.is_file():
            return script
    found = shutil.which("gemini")
    return Path(found).resolve() if found else None


def gemini_version(script: Path) -> str:
    """The version of the npm package, without running it."""
    try:
        return str(json.loads((script.parent.parent / "package.json").read_text(encoding="utf-8"))["version"])
    except (OSError, ValueError, KeyError):
        return "unknown"


class GeminiAgent(CliAgent[list[str], GeminiSpec]):
    """Runs Gemini CLI on the episode's prompt."""

    cli_name = "Gemini CLI"
    spec_class = GeminiSpec

    def host_paths(self) -> list[Path]:
        """The project's ``node_modules``, where the CLI is installed (shown read-only in the sandbox)."""
        modules = node_modules()
        return [modules.resolve()] if modules is not None else []

    def program(self) -> tuple[list[str] | None, str]:
        script, node = gemini_script(), shutil.which("node")
        if script is None or node is None:
            return None, f"{'Gemini CLI' if script is None else 'node'} not found (run `make setup`)"
        return [node, str(script)], ""

    def recorder(self, sink: EventSink, model: str | None) -> GeminiRecorder:
        return GeminiRecorder(sink, model)

    def versions(self, program: list[str]) -> dict[str, str]:
        return {"gemini_cli": gemini_version(Path(program[-1]))}

    async def launch(
        self, request: AgentRequest, spec: GeminiSpec, command: list[str]
    ) -> tuple[CliLaunch, str | None]:
        sandbox, endpoint = request.sandbox, request.endpoint
        model = model_name(request, spec, SCRIPTED_MODEL)
        home = GeminiHome(f"{sandbox.env['HOME']}/.gemini")
        await home.write(
            sandbox,
            spec,
            max_turns=max_turns(spec, request.limits),
            instructions=spec.instructions(),
            skills=offered_skill_folders(request),
        )
        credentials = host_credentials(HOST_CREDENTIALS, os.environ) if endpoint is None else {}
        env = cli_env(sandbox.env, credentials, resolve_env(spec.env), home.env(endpoint))
        argv = [*command, "-p", request.prompt, "-o", "stream-json", "--skip-trust"]
        argv += PERMISSION_FLAGS[spec.permission_mode]
        if model is not None:
            argv += ["-m", model]
        return CliLaunch(argv, env), model
