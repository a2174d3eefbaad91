"""``codex``: the real Codex CLI, run as ``codex exec --json`` in the sandbox.

Example::

    result = await CodexAgent().run(request, sink)
    result.status, result.usage, result.cost_usd, result.versions["codex"]

The CLI gets a per-episode ``$CODEX_HOME`` (``home.py``) and an environment built from named parts
(``cli_agent.cli_env``): nothing from the host's config, no update check, no analytics. Its events
become trajectory events as they stream (``recorder.py``); the end is mapped honestly
(``cli_agent.cli_result``).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

from coder_eval.agents.base import AgentRequest, EventSink
from coder_eval.agents.cli_agent import CliAgent, CliLaunch, cli_env, host_credentials
from coder_eval.agents.cli_spec import model_name, offered_skill_folders
from coder_eval.agents.codex.home import CodexHome
from coder_eval.agents.codex.recorder import CodexRecorder
from coder_eval.agents.codex.spec import OWN_SANDBOX, CodexSpec
from coder_eval.agents.spec import resolve_env
from coder_eval.errors import AgentError
from coder_eval.version import pip_install

SCRIPTED_MODEL = "gpt-5.1-codex"
"""The model a scripted run names when its script names none."""

DEFAULTS = {"NO_COLOR": "1", "CODEX_DISABLE_TELEMETRY": "1"}
HOST_CREDENTIALS = ("OPENAI_API_KEY", "OPENAI_BASE_URL")
"""Forwarded from the host for real-model runs only."""

PERMISSION_FLAGS = {
    "bypassPermissions": ["--dangerously-bypass-approvals-and-sandbox"],
    "workspace-write": ["--sandbox", "workspace-write"],
    "read-only": ["--sandbox", "read-only"],
}


def codex_binary() -> Path | None:
    """The binary of the ``openai-codex-cli-bin`` wheel, else ``codex`` on the host PATH."""
    try:
        import codex_cli_bin

        return Path(codex_cli_bin.bundled_codex_path())
    except (ImportError, FileNotFoundError):
        found = shutil.which("codex")
        return Path(found) if found else None


def codex_version(codex: Path) -> str:
    """The version recorded beside the wheel's binary, without running it."""
    try:
        meta = json.loads((codex.parent.parent / "codex-package.json").read_text(encoding="utf-8"))
        return str(meta["version"])
    except (OSError, ValueError, KeyError):
        return "unknown"


def _check_mode(spec: CodexSpec, driver: str) -> None:
    """Codex's own sandbox nests bubblewrap, which bwrap and docker sandboxes do not allow: refused
    there (the episode is invalid, not a run whose every command fails)."""
    if spec.codex_mode in OWN_SANDBOX and driver != "tempdir":
        raise AgentError(
            f"permission_mode {spec.permission_mode} runs Codex's own {spec.codex_mode} sandbox, which "
            f"cannot start inside the {driver} sandbox (nested user namespaces are disabled); run the "
            "task with driver: tempdir, or use permission_mode: bypassPermissions"
        )


class CodexAgent(CliAgent[Path, CodexSpec]):
    """Runs the Codex CLI on the episode's prompt."""

    cli_name = "Codex"
    spec_class = CodexSpec

    def host_paths(self) -> list[Path]:
        """The Codex binary's folder, when it is not inside the Python environment running coder_eval."""
        codex = codex_binary()
        if codex is None or codex.resolve().is_relative_to(Path(sys.prefix).resolve()):
            return []
        return [codex.resolve().parent]

    def program(self) -> tuple[Path | None, str]:
        return codex_binary(), f"Codex CLI not found ({pip_install('agents')})"

    def check(self, request: AgentRequest, spec: CodexSpec) -> None:
        _check_mode(spec, request.sandbox.driver)

    def recorder(self, sink: EventSink, model: str | None) -> CodexRecorder:
        return CodexRecorder(sink, model)

    def versions(self, program: Path) -> dict[str, str]:
        return {"codex": codex_version(program)}

    async def launch(
        self, request: AgentRequest, spec: CodexSpec, codex: Path
    ) -> tuple[CliLaunch, str | None]:
        sandbox, endpoint = request.sandbox, request.endpoint
        model = model_name(request, spec, SCRIPTED_MODEL)
        home = CodexHome(f"{sandbox.env['HOME']}/.codex")
        await home.write(
            sandbox,
            spec,
            codex=codex,
            model=model,
            endpoint=endpoint,
            instructions=spec.instructions(),
            skills=offered_skill_folders(request),
        )
        credentials = host_credentials(HOST_CREDENTIALS, os.environ) if endpoint is None else {}
        env = cli_env(sandbox.env, {**DEFAULTS, **credentials}, resolve_env(spec.env), home.env(endpoint))
        argv = [
            str(codex),
            "exec",
            "--json",
            "--ephemeral",
            "--skip-git-repo-check",
            *PERMISSION_FLAGS[spec.codex_mode],
        ]
        if model is not None:
            argv += ["--model", model]
        return CliLaunch([*argv, request.prompt], env), model
