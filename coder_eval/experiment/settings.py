"""Settings from the environment and a ``.env`` file, as the original coder_eval read them.

Example::

    loaded = load_env_file()            # ./.env: each NAME=value the environment does not set already
    loaded.names                        # ("ANTHROPIC_API_KEY", "DEFAULT_AGENT_MODEL")
    settings_layer()                    # {"agent": {"model": "claude-sonnet-4-5"}}: the "settings" layer
    runs_root()                         # Path("runs"), or $RUNS_DIR

``coder-eval`` reads ``.env`` from the folder it runs in once, as it starts, before any command. Every
``NAME=value`` line (``export NAME=value``, quotes, ``#`` comments and ``${OTHER}`` references, as
python-dotenv reads them) goes into the process's environment unless the environment already has
``NAME``: the environment wins over the file. From there each setting is read where it always is:

- keys: ``ANTHROPIC_API_KEY`` (``ANTHROPIC_AUTH_TOKEN``), ``OPENAI_API_KEY``, ``GEMINI_API_KEY``,
  ``GOOGLE_API_KEY``, ``OPENROUTER_API_KEY``, given to a real-model agent, judge or simulated user;
- endpoints: ``ANTHROPIC_BASE_URL``, ``OPENAI_BASE_URL``, ``GOOGLE_GEMINI_BASE_URL``;
- defaults (:data:`DEFAULTS`): ``DEFAULT_AGENT_MODEL``, ``DEFAULT_PERMISSION_MODE`` and
  ``DEFAULT_MAX_TURNS`` make the merge layer ``settings``, over the task file and under the variant
  and the command line (the original's "command line > .env > task file"); ``RUNS_DIR`` is where
  runs are written and found (default ``runs``);
- switches: ``CODER_EVAL_RAW_SDK_LOG``, ``CODER_EVAL_STORE``, and any variable a task names
  (``{from_env: NAME}``, ``docker.env_passthrough``).

``API_BACKEND`` other than ``direct`` (the original's LLM gateway and Bedrock routing) is refused by
name: coder_eval has no such backend, and running without it would measure another route.
"""

from __future__ import annotations

import io
import os
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from coder_eval.errors import InputError

ENV_FILE = Path(".env")
"""Read from the working directory, as the original read it."""

DEFAULTS: dict[str, tuple[str, str]] = {
    "DEFAULT_AGENT_MODEL": ("agent", "model"),
    "DEFAULT_PERMISSION_MODE": ("agent", "permission_mode"),
    "DEFAULT_MAX_TURNS": ("run_limits", "max_turns"),
}
"""Setting -> the task field it sets in the ``settings`` layer."""

RUNS_DIR = "RUNS_DIR"
BACKEND = "API_BACKEND"


@dataclass(frozen=True)
class EnvFile:
    """What :func:`load_env_file` read: the file, the names it set, and those the environment kept."""

    path: Path
    names: tuple[str, ...] = ()
    kept: tuple[str, ...] = ()


def load_env_file(path: Path = ENV_FILE, environ: MutableMapping[str, str] | None = None) -> EnvFile:
    """Each ``NAME=value`` of ``path`` set in ``environ`` (default: this process's environment) where
    it has no ``NAME`` yet; nothing when there is no such file. ``InputError`` naming the file and line
    of a line that is not ``NAME=value``, or a file that cannot be read.

    Example: with ``.env`` holding ``DEFAULT_MAX_TURNS=5``, ``load_env_file().names`` ->
    ``("DEFAULT_MAX_TURNS",)``.
    """
    from dotenv import dotenv_values  # a command in a folder without .env never imports it
    from dotenv.parser import parse_stream

    environ = os.environ if environ is None else environ
    if not path.is_file():
        return EnvFile(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read the settings file: {exc}") from exc
    for binding in parse_stream(io.StringIO(text)):
        if binding.error:
            raise InputError(
                f"{path}:{binding.original.line}: not a NAME=value line: {binding.original.string.strip()!r}"
            )
    values = dotenv_values(stream=io.StringIO(text), interpolate=True)
    names, kept = [], []
    for name, value in values.items():
        if value is None:
            continue
        if name in environ:
            kept.append(name)
        else:
            environ[name] = value
            names.append(name)
    return EnvFile(path, tuple(names), tuple(kept))


def settings_layer(environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The partial task the ``DEFAULT_*`` settings make (the merge layer ``settings``); ``InputError``
    for a value that cannot be used, or an ``API_BACKEND`` coder_eval does not have.

    Example: ``settings_layer({"DEFAULT_MAX_TURNS": "5"})`` -> ``{"run_limits": {"max_turns": 5}}``.
    """
    environ = os.environ if environ is None else environ
    backend = environ.get(BACKEND, "").strip()
    if backend and backend.lower() != "direct":
        raise InputError(
            f"{BACKEND}={backend}: coder_eval has no {backend!r} backend (the original's LLM gateway and "
            "Bedrock routing); agents reach their model through its own variables (ANTHROPIC_BASE_URL, "
            "or for Bedrock CLAUDE_CODE_USE_BEDROCK and AWS_REGION in agent.env): unset it"
        )
    layer: dict[str, Any] = {}
    for name, (block, field) in DEFAULTS.items():
        value = environ.get(name, "").strip()
        if value:
            layer.setdefault(block, {})[field] = _value(name, field, value)
    return layer


def _value(name: str, field: str, value: str) -> Any:
    if field != "max_turns":
        return value
    if not value.isdigit() or int(value) < 1:
        raise InputError(f"{name}={value!r}: a whole number of turns, at least 1")
    return int(value)


def runs_root(environ: Mapping[str, str] | None = None) -> Path:
    """Where runs are written and found: ``$RUNS_DIR``, else ``runs`` (in the working directory).

    Example: ``runs_root({"RUNS_DIR": "/data/runs"})`` -> ``Path("/data/runs")``.
    """
    value = (os.environ if environ is None else environ).get(RUNS_DIR, "").strip()
    return Path(value) if value else Path("runs")
