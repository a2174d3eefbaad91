"""The Claude Code CLI's environment: built from named parts, never inherited from the host.

Example::

    env = cli_env(sandbox.env, {"CI": "1"}, endpoint=None, host={"ANTHROPIC_API_KEY": "sk-..."})
    env["HOME"]               # the sandbox's HOME
    env["ANTHROPIC_API_KEY"]  # "sk-..." (a real-model run); a scripted run gets the server's dummy key

Layers, later wins:

1. ``sandbox.env``: the sandbox's scrubbed environment (PATH, HOME inside the sandbox, TMPDIR, ...);
2. :data:`CLI_DEFAULTS`: no auto-update, telemetry, error reports or other non-essential traffic;
3. real-model runs only: :data:`HOST_CREDENTIALS` copied from the host when set there;
4. ``agent.env`` from the task;
5. scripted runs only: the scripted server's ``ANTHROPIC_BASE_URL`` and dummy ``ANTHROPIC_API_KEY``,
   which nothing can override, so a scripted episode never reaches a real endpoint.

Nothing else from the host reaches the CLI or the tools it runs (see ``launcher.py`` for how the
SDK's own inheritance of ``os.environ`` is cut off).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from coder_eval.agents.base import ModelEndpoint

CLI_DEFAULTS: dict[str, str] = {
    "IS_SANDBOX": "1",
    "DISABLE_AUTOUPDATER": "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY": "1",
}
"""Set for every run. ``IS_SANDBOX=1`` lets ``bypassPermissions`` run as root."""

HOST_CREDENTIALS = ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL")
"""The only host variables forwarded, and only when the model is real (not ``scripted``)."""

SDK_VARIABLES = (
    "CLAUDE_CODE_ENTRYPOINT",
    "CLAUDE_AGENT_SDK_VERSION",
    "CLAUDE_CODE_SDK_READS_SESSION_STATE",
    "CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING",
    "PWD",
)
"""Variables claude-agent-sdk sets for the CLI to speak its protocol; passed through unchanged."""

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def cli_env(
    sandbox_env: Mapping[str, str],
    agent_env: Mapping[str, str],
    endpoint: ModelEndpoint | None,
    host: Mapping[str, str],
) -> dict[str, str]:
    """The complete environment of the CLI, from the layers in the module docstring.

    Example: ``cli_env({"HOME": "/s/home"}, {}, ModelEndpoint("http://127.0.0.1:5"), os.environ)``
    -> ``{"HOME": "/s/home", "IS_SANDBOX": "1", ..., "ANTHROPIC_BASE_URL": "http://127.0.0.1:5", ...}``
    """
    env = {**sandbox_env, **CLI_DEFAULTS}
    if endpoint is None:
        env.update({name: host[name] for name in HOST_CREDENTIALS if host.get(name)})
    env.update(agent_env)
    if endpoint is not None:
        env.update(endpoint.env())
    return env


def bad_names(env: Mapping[str, str]) -> list[str]:
    """Variable names that cannot be passed on safely (not shell identifiers).

    Example: ``bad_names({"OK": "1", "NOT-OK": "2"})`` -> ``["NOT-OK"]``.
    """
    return [name for name in env if not _NAME.match(name)]
