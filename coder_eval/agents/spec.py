"""The ``agent:`` block: each agent kind owns a spec class; the block is a union discriminated on ``type``.

Example (task YAML, the original spelling; ``kind`` is accepted for ``type``)::

    agent:
      type: claude-code
      model: claude-sonnet-4-6
      permission_mode: acceptEdits
      allowed_tools: [Bash, Read, Edit]
      plugins: [{type: local, path: .plugins/site-tools}]
      env: {GH_TOKEN: {from_env: GH_TOKEN}}     # the host's value, passed to the agent process only

A field that belongs to another kind is an error that names the kinds it belongs to. Specs are light
(no agent code is imported to validate one); ``coder_eval.agents.AGENTS`` maps each kind to its spec
and, lazily, to its implementation.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, field_validator

from coder_eval.agents.vocabulary import Vocabulary
from coder_eval.errors import AgentError

VARIABLE = re.compile(r"\$(\w+)|\$\{(\w+)\}")


class FromEnv(BaseModel):
    """A secret taken from the host's environment when the agent starts: ``{from_env: OPENAI_API_KEY}``.

    Only the variable's *name* is part of the task (and so of ``run.json`` and every trajectory); its
    value goes to that agent's process and is written nowhere.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)
    from_env: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$", description="Host variable to read.")


EnvValue = str | FromEnv


def resolve_env(env: Mapping[str, EnvValue], host: Mapping[str, str] | None = None) -> dict[str, str]:
    """``agent.env`` with every ``{from_env: NAME}`` replaced by the host's value.

    Example: ``resolve_env({"A": "1", "K": FromEnv(from_env="KEY")}, {"KEY": "s3cret"})``
    -> ``{"A": "1", "K": "s3cret"}``; an unset host variable raises ``AgentError`` naming it.
    """
    host = os.environ if host is None else host
    resolved = {}
    for name, value in env.items():
        if isinstance(value, FromEnv):
            if value.from_env not in host:
                raise AgentError(f"agent.env.{name}: the host variable {value.from_env} is not set")
            resolved[name] = host[value.from_env]
        else:
            resolved[name] = value
    return resolved


class LocalPlugin(BaseModel):
    """A plugin folder (its skills under ``skills/<name>/SKILL.md``) or a bare skills root
    (``<name>/SKILL.md``), on the host next to the suite.

    Example: ``{type: local, path: ../skills}``; a plain path is the same. ``$VAR`` and ``${VAR}`` are
    expanded from the host's environment; a relative path is relative to the file that names it (the
    loader makes it absolute: ``coder_eval.agents.skill_sources``).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)
    type: Literal["local"] = Field(default="local", description="Only local plugin folders.")
    path: str = Field(min_length=1, description="The folder: absolute, or relative to the naming file.")

    @field_validator("path", mode="before")
    @classmethod
    def _expand(cls, value: Any) -> Any:
        return expand_variables(value) if isinstance(value, str) else value


def expand_variables(value: str) -> str:
    """``$VAR`` and ``${VAR}`` replaced by the host's value; an unset one is left as written.

    Example: with ``SKILLS=/opt/skills``, ``expand_variables("$SKILLS/team")`` -> ``"/opt/skills/team"``.
    """
    return VARIABLE.sub(lambda m: os.environ.get(m.group(1) or m.group(2), m.group(0)), value)


def kind_field(kind: str) -> Any:
    """The ``type`` field of one kind's spec, also read from ``kind`` (our earlier spelling).

    Example: ``type: Literal["codex"] = kind_field("codex")``.
    """
    return Field(default=kind, validation_alias=AliasChoices("type", "kind"), description="The agent kind.")


@dataclass(frozen=True)
class RealEndpoint:
    """Where a kind's real model is: the host variable that moves it, the provider's default, and
    its key: the host variable that holds it and the header its API takes it in (``x-api-key``,
    ``authorization`` as a bearer token, ``x-goog-api-key``). The harness's API proxy sends the key;
    the agent's CLI never sees it (``coder_eval.endpoint.proxy``)."""

    variable: str
    default: str
    key: str = ""
    header: str = "x-api-key"


@dataclass(frozen=True)
class Capabilities:
    """What an agent kind can do, which a task may ask of it: one row per kind, on its spec class
    (``CAPABILITIES``), so the task schema, the stage and the agent phase ask the kind, never its name.

    Example: ``Capabilities(endpoint=RealEndpoint("OPENAI_BASE_URL", "https://api.openai.com"))``.
    """

    endpoint: RealEndpoint | None = None
    """It talks to a model (its skills are recorded; under ``network: model`` it reaches this endpoint)."""
    keeps_session: bool = False
    """It continues its session across user turns (a ``simulation`` or ``max_iterations`` can drive it)."""
    checks_graders: bool = False
    """It is a grader check (oracle, ``none``): never stopped early, never in a dialog, one iteration."""
    live_events: bool = True
    """Its events are seen while it runs (false: read after it exits, so it cannot be stopped early)."""
    needs_prompt: bool = True
    """A task for it must give a prompt (``none`` reads none)."""
    runs_reference: bool = False
    """It runs the task's reference solution (``oracle``): the only kind shown a solution folder."""

    @property
    def talks_to_model(self) -> bool:
        return self.endpoint is not None


class AgentSpecBase(BaseModel):
    """What every agent kind has: its ``type`` (alias ``kind``) and a ``model``.

    ``model`` is ``scripted`` when coder_eval's scripted model server plays the model (offline).
    ``CAPABILITIES`` is what the kind can do and ``TOOLS`` what its CLI calls each tool (a plugin's
    spec may declare its own).
    """

    CAPABILITIES: ClassVar[Capabilities] = Capabilities()
    TOOLS: ClassVar[Vocabulary] = Vocabulary()
    """What its CLI calls each canonical tool (empty: the canonical names, or no tools)."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)
    type: str = Field(validation_alias=AliasChoices("type", "kind"), description="The agent kind.")
    model: str | None = Field(default=None, description="Model id, or 'scripted' for the scripted server.")

    @property
    def kind(self) -> str:
        """The agent kind (``type``), the name older task files use."""
        return self.type

    @property
    def scripted(self) -> bool:
        return self.model == "scripted"

    def model_keys(self) -> tuple[str, ...]:
        """Host variables, any one of which this agent needs to reach its model; ``()`` when it needs
        none (no model, a scripted one, or ``agent.env`` passing the credentials itself)."""
        return ()


class CliAgentSpec(AgentSpecBase):
    """Fields every CLI agent has (Claude Code, Codex, OpenCode, Gemini CLI)."""

    MODEL_KEYS: ClassVar[tuple[str, ...]] = ()
    """Host variables the CLI authenticates its real model with (any one is enough)."""
    AUTH_ENV: ClassVar[tuple[str, ...]] = ()
    """Further ``agent.env`` names that authenticate it instead (a token, a cloud provider switch)."""

    permission_mode: str = Field(default="acceptEdits", description="The CLI's permission mode.")
    allowed_tools: list[str] = Field(default_factory=list, description="Tools allowed without asking.")
    disallowed_tools: list[str] = Field(default_factory=list, description="Tools removed.")
    plugins: list[LocalPlugin] = Field(default_factory=list, description="Plugin folders whose skills load.")
    system_prompt: str | None = Field(default=None, description="Text appended to the agent's own prompt.")
    system_prompt_file: str | None = Field(
        default=None, description="A file of such text, relative to the task file (read at load)."
    )
    env: dict[str, EnvValue] = Field(
        default_factory=dict, description="Environment for the agent process; {from_env: NAME} for secrets."
    )
    max_turns: int | None = Field(default=None, ge=1, description="Agent turns (min with run_limits).")
    ignore_patterns: list[str] = Field(
        default_factory=list, description="Left out of workspace copies (added to sandbox.ignore_patterns)."
    )

    @field_validator("plugins", mode="before")
    @classmethod
    def _plain_paths(cls, value: Any) -> Any:
        if isinstance(value, list):
            return [{"type": "local", "path": item} if isinstance(item, str) else item for item in value]
        return value

    def model_keys(self) -> tuple[str, ...]:
        if self.scripted or any(name in self.env for name in (*self.MODEL_KEYS, *self.AUTH_ENV)):
            return ()
        return self.MODEL_KEYS

    def instructions(self) -> str | None:
        """The text to append to the agent's own prompt (the loader has added ``system_prompt_file``'s)."""
        return self.system_prompt or None


def plugin_paths(spec: AgentSpecBase) -> list[str]:
    """The paths of a spec's plugins (none for kinds without plugins): absolute for host folders,
    relative for workspace folders, once the loader has resolved them."""
    return [p.path for p in getattr(spec, "plugins", [])]


def read_prompt_file(spec: AgentSpecBase, base: Path) -> AgentSpecBase:
    """``spec`` with the text of ``system_prompt_file`` (relative to ``base``) appended to
    ``system_prompt``, and the file's path made absolute.

    ``AgentError`` when it cannot be read (the loader turns it into a task error with the line).
    """
    relative = getattr(spec, "system_prompt_file", None)
    if not relative:
        return spec
    path = (base / relative).resolve()
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise AgentError(f"agent.system_prompt_file: cannot read {path}: {exc.strerror or exc}") from exc
    prompt = "\n\n".join(p for p in (getattr(spec, "system_prompt", None), text) if p)
    return spec.model_copy(update={"system_prompt": prompt, "system_prompt_file": str(path)})
