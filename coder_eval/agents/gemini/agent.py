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

from coder_eval.agents.base import AgentRequest, AgentResult, EventSink
from coder_eval.agents.cli_agent import CliLaunch, Limits, cli_env, cli_result, host_credentials, run_cli
from coder_eval.agents.cli_spec import max_turns, model_name, offered_skill_folders, own_spec
from coder_eval.agents.gemini.home import GeminiHome
from coder_eval.agents.gemini.recorder import GeminiRecorder
from coder_eval.agents.gemini.spec import GeminiSpec
from coder_eval.agents.node_cli import node_modules
from coder_eval.agents.spec import resolve_env
from coder_eval.errors import AgentError
from coder_eval.trajectory import Message

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


class GeminiAgent:
    """Runs Gemini CLI on the episode's prompt."""

    def host_paths(self) -> list[Path]:
        """The project's ``node_modules``, where the CLI is installed (shown read-only in the sandbox)."""
        modules = node_modules()
        return [modules.resolve()] if modules is not None else []

    async def run(self, request: AgentRequest, sink: EventSink) -> AgentResult:
        script, node = gemini_script(), shutil.which("node")
        if script is None or node is None:
            missing = "Gemini CLI" if script is None else "node"
            return AgentResult(
                invalid=True, status="infra_error", error=f"{missing} not found (run `make setup`)"
            )
        try:
            spec = own_spec(request, GeminiSpec)
            launch, model = await self._launch(request, spec, [node, str(script)])
        except (AgentError, ValueError) as exc:
            return AgentResult(invalid=True, status="infra_error", error=str(exc))
        sink.write(Message(role="user", content=[{"type": "text", "text": request.prompt}]))
        recorder = GeminiRecorder(sink, model)
        limits = request.limits
        end = await run_cli(
            request,
            launch,
            recorder,
            Limits(max_turns(spec, limits), limits.max_usd),
        )
        result = cli_result(recorder, end, "Gemini CLI")
        result.versions = {"gemini_cli": gemini_version(script)}
        return result

    async def _launch(
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
