"""``opencode``: the real OpenCode CLI, run as ``opencode run --format json`` in the sandbox.

Example::

    result = await OpenCodeAgent().run(request, sink)
    result.status, result.usage, result.cost_usd, result.versions["opencode"]

The binary is the platform package npm installed into the project's ``node_modules``
(``opencode-linux-x64``), started directly. The prompt goes to its stdin (a positional prompt
reaches the model quoted). Its configuration lives in the sandbox's XDG config folder
(``home.py``); its events become trajectory events as they stream (``recorder.py``).
"""

from __future__ import annotations

import json
import os
import platform
import shutil
from collections.abc import Mapping
from pathlib import Path

from coder_eval.agents.base import AgentRequest, AgentResult, EventSink
from coder_eval.agents.cli_agent import CliAgent, CliLaunch, cli_env
from coder_eval.agents.cli_spec import model_name
from coder_eval.agents.node_cli import node_modules
from coder_eval.agents.opencode.home import OpenCodeConfig
from coder_eval.agents.opencode.recorder import OpenCodeRecorder
from coder_eval.agents.opencode.skills import skill_listing
from coder_eval.agents.opencode.spec import PROVIDER_KEYS, OpenCodeSpec
from coder_eval.agents.spec import resolve_env

SCRIPTED_MODEL = "claude-sonnet-4-5"
"""The model a scripted run names when its script names none (OpenCode speaks Anthropic to it)."""


TITLE = "coder_eval episode"
"""Passed as ``--title`` so OpenCode does not ask the model for one."""


def opencode_binary() -> Path | None:
    """OpenCode's platform binary in ``node_modules`` (``opencode-<os>-<arch>/bin/opencode``),
    else ``opencode`` on the host PATH."""
    arch = {"x86_64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(platform.machine(), platform.machine())
    modules = node_modules()
    if modules is not None:
        for package in (
            f"opencode-{platform.system().lower()}-{arch}",
            f"opencode-{platform.system().lower()}-{arch}-baseline",
        ):
            binary = modules / package / "bin" / "opencode"
            if binary.is_file():
                return binary
    found = shutil.which("opencode")
    return Path(found) if found else None


def opencode_version(binary: Path) -> str:
    """The version of the npm package the binary came in, without running it."""
    try:
        return str(json.loads((binary.parent.parent / "package.json").read_text(encoding="utf-8"))["version"])
    except (OSError, ValueError, KeyError):
        return "unknown"


def provider_credentials(model: str | None, host: Mapping[str, str]) -> dict[str, str]:
    """The one host key OpenCode needs for ``model`` (real-model runs only): its provider's, never the
    others' (the agent's tools can read the CLI's environment).

    Example: ``provider_credentials("openai/gpt-5", os.environ)`` -> ``{"OPENAI_API_KEY": "…"}``. A
    provider coder_eval has no key name for gets none (``agent.env`` passes it); a model without a
    provider gets the first key set of ``PROVIDER_KEYS``, the provider OpenCode will then use.
    """
    provider, slash, _ = (model or "").partition("/")
    if provider in PROVIDER_KEYS:
        names: tuple[str, ...] = (PROVIDER_KEYS[provider],)
    else:
        names = () if slash else tuple(PROVIDER_KEYS.values())
    first = next((name for name in names if host.get(name)), None)
    return {first: host[first]} if first is not None else {}


class OpenCodeAgent(CliAgent[Path, OpenCodeSpec]):
    """Runs the OpenCode CLI on the episode's prompt."""

    cli_name = "OpenCode"
    spec_class = OpenCodeSpec

    def host_paths(self) -> list[Path]:
        """The project's ``node_modules``, where the CLI is installed (shown read-only in the sandbox)."""
        modules = node_modules()
        return [modules.resolve()] if modules is not None else []

    def program(self) -> tuple[Path | None, str]:
        return opencode_binary(), "OpenCode not found (run `make setup`)"

    async def before_run(
        self, request: AgentRequest, sink: EventSink, spec: OpenCodeSpec, program: Path, launch: CliLaunch
    ) -> None:
        if request.plugins:
            sink.write(await skill_listing(request.sandbox, program, launch.env, pure=spec.pure))

    def recorder(self, sink: EventSink, model: str | None) -> OpenCodeRecorder:
        return OpenCodeRecorder(sink, model)

    def versions(self, program: Path) -> dict[str, str]:
        return {"opencode": opencode_version(program)}

    def after_run(self, spec: OpenCodeSpec, result: AgentResult) -> AgentResult:
        if spec.require_token_telemetry and not result.invalid and result.usage.total == 0:
            result.invalid, result.status, result.cause = True, "agent_error", "harness"
            result.error = "OpenCode reported no token counts and require_token_telemetry is set"
        return result

    async def launch(
        self, request: AgentRequest, spec: OpenCodeSpec, binary: Path
    ) -> tuple[CliLaunch, str | None]:
        sandbox, endpoint = request.sandbox, request.endpoint
        model = model_name(request, spec, SCRIPTED_MODEL)
        config = OpenCodeConfig(f"{sandbox.env['XDG_CONFIG_HOME']}/opencode")
        qualified = await config.write(
            sandbox,
            spec,
            model=model,
            endpoint=endpoint,
            instructions=spec.instructions(),
            skill_paths=[d for plugin in request.plugins for d in plugin.skill_dirs],
        )
        credentials = provider_credentials(model, os.environ) if endpoint is None else {}
        env = cli_env(sandbox.env, credentials, resolve_env(spec.env), config.env())
        argv = [
            str(binary),
            "run",
            "--format",
            "json",
            "--title",
            TITLE,
            "--print-logs",
            "--log-level",
            "ERROR",
        ]
        if qualified is not None:
            argv += ["--model", qualified]
        if spec.agent is not None:
            argv += ["--agent", spec.agent]
        if spec.variant is not None:
            argv += ["--variant", spec.variant]
        if spec.pure:
            argv.append("--pure")
        return CliLaunch(argv, env, stdin=request.prompt), model
